// Package storecalls finds which methods of store.Store a package uses and
// which of them write, for the tests that keep each package to its side of
// the store: the HTTP handlers and the command line read, the service writes.
package storecalls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// StorePath is the import path of the store package.
const StorePath = "github.com/heraldhq/herald/store"

// Writes returns the exported methods of *store.Store that write, read from
// the store package's source in dir: those that hand work to the writer
// goroutine (submit), or run a statement on the write connection
// themselves (anything on the receiver's write field but closing it), and
// those that call such a method, however indirectly.
func Writes(dir string) (map[string]bool, error) {
	fset := token.NewFileSet()
	files, err := goFiles(dir)
	if err != nil {
		return nil, err
	}
	calls := map[string]map[string]bool{} // method -> Store methods it calls
	writes := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || !isStoreRecv(fd.Recv) {
				continue
			}
			recv := fd.Recv.List[0].Names
			if len(recv) == 0 {
				continue
			}
			r, m := recv[0].Name, fd.Name.Name
			calls[m] = map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == r {
					calls[m][sel.Sel.Name] = true
					if sel.Sel.Name == "submit" {
						writes[m] = true
					}
				}
				// r.write.<anything but Close>
				if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "write" && sel.Sel.Name != "Close" {
					if id, ok := inner.X.(*ast.Ident); ok && id.Name == r {
						writes[m] = true
					}
				}
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for m, cs := range calls {
			if writes[m] {
				continue
			}
			for c := range cs {
				if writes[c] {
					writes[m], changed = true, true
					break
				}
			}
		}
	}
	out := map[string]bool{}
	for m := range writes {
		if token.IsExported(m) {
			out[m] = true
		}
	}
	return out, nil
}

func isStoreRecv(fl *ast.FieldList) bool {
	if len(fl.List) != 1 {
		return false
	}
	st, ok := fl.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := st.X.(*ast.Ident)
	return ok && id.Name == "Store"
}

// goFiles lists the non-test Go files the build takes from the package in
// dir on this platform.
func goFiles(dir string) ([]string, error) {
	var p struct{ GoFiles []string }
	out, err := goList(dir, "-json", ".")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, err
	}
	return p.GoFiles, nil
}

func goList(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// Calls returns every method of *store.Store that the non-test code of the
// package in dir calls or takes as a value, with where. It type-checks the
// package, so a store reached through any variable, field or parameter
// counts.
func Calls(dir string) (map[string][]token.Position, error) {
	out, err := goList(dir, "-export", "-deps", "-json", ".")
	if err != nil {
		return nil, err
	}
	type pkg struct {
		ImportPath, Dir, Export string
		GoFiles                 []string
		DepOnly                 bool
	}
	exports := map[string]string{}
	var self *pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			self = &p
		}
	}
	if self == nil {
		return nil, fmt.Errorf("go list in %s: no package", dir)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range self.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(self.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp}).Check(self.ImportPath, fset, files, info); err != nil {
		return nil, err
	}
	used := map[string][]token.Position{}
	for sel, s := range info.Selections {
		if s.Kind() == types.FieldVal {
			continue
		}
		fn, ok := s.Obj().(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Pkg().Path() != StorePath {
			continue
		}
		recv := fn.Signature().Recv()
		if recv == nil {
			continue
		}
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); !ok || n.Obj().Name() != "Store" {
			continue
		}
		used[fn.Name()] = append(used[fn.Name()], fset.Position(sel.Sel.Pos()))
	}
	for _, ps := range used {
		sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	}
	return used, nil
}

// writeVerbs start the names of store methods that change the database
// (or, for Take, a shared rate bucket) by what they say they do. Writes
// finds the writers by what they do; this list catches one that writes by
// a road Writes does not follow (a channel to another goroutine, a dialect
// method, a connection of its own).
var writeVerbs = []string{"Answer", "Cast", "Claim", "Clear", "Create", "Deactivate", "Defer", "Delete", "Ensure",
	"Exclusive", "Expire", "Finish", "Index", "Insert", "Mark", "Pin", "Reclaim", "Record", "Redeliver", "Regenerate",
	"Register", "Release", "Rename", "Reorder", "Respond", "Revoke", "Rotate", "Save", "Set", "Sweep", "Take", "Touch",
	"Unpin", "Update", "Vacuum"}

// NamedWrite reports whether a store method's name says it writes: it
// starts with one of writeVerbs as a whole word (Pin, not Ping).
func NamedWrite(method string) bool {
	for _, v := range writeVerbs {
		if rest, ok := strings.CutPrefix(method, v); ok && (rest == "" || rest[0] >= 'A' && rest[0] <= 'Z') {
			return true
		}
	}
	return false
}

// Sorted returns the names of a set or map in order.
func Sorted[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Check returns the store methods the package in dir uses, and those of
// them that write (by Writes over the store's source in storeDir, or by
// NamedWrite) and are not in allowed, in order.
func Check(dir, storeDir string, allowed map[string]bool) (map[string][]token.Position, []string, error) {
	calls, err := Calls(dir)
	if err != nil {
		return nil, nil, err
	}
	writes, err := Writes(storeDir)
	if err != nil {
		return nil, nil, err
	}
	var bad []string
	for _, m := range Sorted(calls) {
		if (writes[m] || NamedWrite(m)) && !allowed[m] {
			bad = append(bad, m)
		}
	}
	return calls, bad, nil
}
