package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  needArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			c := buildCommit(a.build.Commit, info)
			if c == "" {
				c = "unknown: built without VCS information (go run, -buildvcs=false, or outside a git checkout)"
			}
			fmt.Fprintf(a.stdout, "herald %s (commit %s, %s, %s/%s)\n", buildVersion(a.build.Version, info), c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// version is the version serve reports (logs, the admin API, the
// callbacks' User-Agent): the one main was stamped with, or "dev".
func (a *app) version() string {
	if a.build.Version == "" {
		return "dev"
	}
	return a.build.Version
}

// buildCommit is the commit a binary was built from: the one set with
// -ldflags "-X main.commit=..." if any, else the VCS revision the go
// command stamped into the build info (a build inside a git checkout,
// with "+dirty" for uncommitted changes). go run, -buildvcs=false and
// builds outside a checkout stamp none.
func buildCommit(set string, info *debug.BuildInfo) string {
	if set != "" {
		return set
	}
	if info == nil {
		return ""
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

// buildVersion is the version set with -ldflags "-X main.version=...", or
// else the module version go install stamps (herald@v1.2.3), or "dev".
func buildVersion(set string, info *debug.BuildInfo) string {
	if set != "" && set != "dev" {
		return set
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
