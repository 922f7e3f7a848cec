package cli

import (
	"runtime/debug"
	"testing"
)

func TestBuildCommit(t *testing.T) {
	info := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name, set string
		info      *debug.BuildInfo
		want      string
	}{
		{"ldflags win", "abc123", info("vcs.revision", "def456"), "abc123"},
		{"from the build info", "", info("vcs", "git", "vcs.revision", "def456", "vcs.modified", "false"), "def456"},
		{"uncommitted changes", "", info("vcs.revision", "def456", "vcs.modified", "true"), "def456+dirty"},
		{"no vcs stamp", "", info("-buildmode", "exe"), ""},
		{"no build info", "", nil, ""},
	} {
		if got := buildCommit(c.set, c.info); got != c.want {
			t.Errorf("%s: buildCommit = %q, want %q", c.name, got, c.want)
		}
	}
	mod := &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}
	if got := buildVersion("dev", mod); got != "v1.4.0" {
		t.Errorf("buildVersion from go install = %q, want v1.4.0", got)
	}
	if got := buildVersion("v2.0.0", mod); got != "v2.0.0" {
		t.Errorf("buildVersion with ldflags = %q, want v2.0.0", got)
	}
	if got := buildVersion("dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); got != "dev" {
		t.Errorf("buildVersion of a local build = %q, want dev", got)
	}
}
