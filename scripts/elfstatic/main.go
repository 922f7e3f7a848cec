// Command elfstatic checks that release binaries are static ELF files for
// the architecture they are named for: no program interpreter (the dynamic
// loader) and no shared libraries needed. It needs no tools beyond Go, so
// CI can run it on any machine:
//
//	go run ./scripts/elfstatic -arch arm64 herald-linux-arm64
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
)

// machines maps GOARCH to the ELF machine its binaries carry.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
	"arm":   elf.EM_ARM,
	"386":   elf.EM_386,
}

func main() {
	arch := flag.String("arch", "", "GOARCH the binaries must be built for (amd64, arm64, arm)")
	flag.Parse()
	want, ok := machines[*arch]
	if !ok || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: elfstatic -arch amd64|arm64|arm FILE...")
		os.Exit(2)
	}
	failed := false
	for _, path := range flag.Args() {
		if err := check(path, want); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			failed = true
			continue
		}
		fmt.Printf("%s: static %s ELF\n", path, want)
	}
	if failed {
		os.Exit(1)
	}
}

// check opens path as ELF and refuses a wrong machine or any sign of
// dynamic linking.
func check(path string, want elf.Machine) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != want {
		return fmt.Errorf("machine %s, want %s", f.Machine, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("has a program interpreter: dynamically linked")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	if len(libs) > 0 {
		return fmt.Errorf("needs shared libraries %v: dynamically linked", libs)
	}
	return nil
}
