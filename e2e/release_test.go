package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// goreleaserConfig is the part of .goreleaser.yaml the release relies on.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Goarm   []string `yaml:"goarm"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Hooks   struct {
			Post []string `yaml:"post"`
		} `yaml:"hooks"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
	} `yaml:"archives"`
	Checksum struct {
		Algorithm string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

// workflow is the part of a GitHub Actions workflow the release relies on.
type workflow struct {
	On struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Jobs map[string]struct {
		RunsOn      string            `yaml:"runs-on"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// releaseTargets are the platforms every release path builds, as
// os/arch[/variant]: .ci/run's static builds, GoReleaser's binaries, the
// Dockerfile's and the workflow's multi-arch image.
var releaseTargets = []string{"linux/amd64", "linux/arm64", "linux/arm/v7"}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestReleaseConfig: GoReleaser builds what .ci/run builds and checks (the
// same three static targets, flags and version stamps), the workflow runs
// it on version tags and pushes the image of the Dockerfile for the same
// platforms. Neither can run here (no GitHub, no registry): this holds
// them to the builds that CI does run.
func TestReleaseConfig(t *testing.T) {
	var gr goreleaserConfig
	readYAML(t, ".goreleaser.yaml", &gr)
	if gr.Version != 2 || len(gr.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: version %d with %d builds, want version 2 with one build", gr.Version, len(gr.Builds))
	}
	b := gr.Builds[0]
	var built []string
	for _, goos := range b.Goos {
		for _, arch := range b.Goarch {
			if arch != "arm" {
				built = append(built, goos+"/"+arch)
				continue
			}
			for _, v := range b.Goarm {
				built = append(built, goos+"/arm/v"+v)
			}
		}
	}
	sameTargets(t, ".goreleaser.yaml builds", built)
	if b.Main != "." || b.Binary != "herald" || !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf(".goreleaser.yaml build: main %q binary %q env %v flags %v; want herald from ., CGO_ENABLED=0, -trimpath", b.Main, b.Binary, b.Env, b.Flags)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, want := range []string{"-s -w", "-X main.version={{ .Tag }}", "-X main.commit={{ .FullCommit }}"} {
		if !strings.Contains(ld, want) {
			t.Errorf(".goreleaser.yaml ldflags %q lack %q", ld, want)
		}
	}
	if !slices.Contains(b.Hooks.Post, "go run ./scripts/elfstatic -arch {{ .Arch }} {{ .Path }}") {
		t.Errorf(".goreleaser.yaml does not check its binaries with scripts/elfstatic: post hooks %v", b.Hooks.Post)
	}
	if len(gr.Archives) != 1 || !strings.Contains(gr.Archives[0].NameTemplate, "{{ .Arch }}{{ if .Arm }}v{{ .Arm }}{{ end }}") ||
		!slices.Contains(gr.Archives[0].Formats, "tar.gz") || gr.Checksum.Algorithm != "sha256" {
		t.Errorf(".goreleaser.yaml archives %+v, checksum %+v: want tar.gz named per arch (armv7 too) and sha256 checksums", gr.Archives, gr.Checksum)
	}

	// .ci/run's release builds, and the flags they use.
	run, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`for target in ([^;]+); do`).FindSubmatch(run)
	if m == nil {
		t.Fatal(".ci/run has no `for target in ...; do` loop of release builds")
	}
	sameTargets(t, ".ci/run", strings.Fields(string(m[1])))
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w -X main.commit=`, "scripts/elfstatic"} {
		if !strings.Contains(string(run), want) {
			t.Errorf(".ci/run's release builds lack %q: update .goreleaser.yaml and this test together", want)
		}
	}

	// The Dockerfile's multi-arch build, as its own comment gives it.
	docker, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`--platform (\S+) `).FindSubmatch(docker)
	if m == nil {
		t.Fatal("the Dockerfile no longer shows its docker buildx --platform list")
	}
	sameTargets(t, "Dockerfile", strings.Split(string(m[1]), ","))
	for _, want := range []string{"ARG VERSION", "ARG COMMIT", "CGO_ENABLED=0", "-trimpath", "-X main.version=$VERSION -X main.commit=$COMMIT"} {
		if !strings.Contains(string(docker), want) {
			t.Errorf("the Dockerfile lacks %q, which the release workflow relies on", want)
		}
	}

	var wf workflow
	readYAML(t, ".github/workflows/release.yml", &wf)
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) {
		t.Errorf("release.yml runs on tags %v, want [v*]", wf.On.Push.Tags)
	}
	step := func(job, uses string) map[string]string {
		t.Helper()
		j, ok := wf.Jobs[job]
		if !ok {
			t.Fatalf("release.yml has no job %q", job)
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, uses+"@") {
				return s.With
			}
		}
		t.Fatalf("release.yml job %s has no step using %s", job, uses)
		return nil
	}
	if w := step("binaries", "actions/setup-go"); w["go-version-file"] != "go.mod" {
		t.Errorf("release.yml sets up Go with %v, want go-version-file: go.mod", w)
	}
	if w := step("binaries", "goreleaser/goreleaser-action"); w["args"] != "release --clean" || w["version"] != "~> v2" {
		t.Errorf("release.yml runs GoReleaser with %v, want version ~> v2 and args release --clean", w)
	}
	if wf.Jobs["binaries"].Permissions["contents"] != "write" || wf.Jobs["image"].Permissions["packages"] != "write" {
		t.Errorf("release.yml permissions: binaries %v, image %v; want contents: write and packages: write",
			wf.Jobs["binaries"].Permissions, wf.Jobs["image"].Permissions)
	}
	w := step("image", "docker/build-push-action")
	sameTargets(t, "release.yml's image", strings.Split(w["platforms"], ","))
	if w["context"] != "." || w["push"] != "true" || !strings.Contains(w["build-args"], "VERSION=${{ github.ref_name }}") ||
		!strings.Contains(w["build-args"], "COMMIT=${{ github.sha }}") {
		t.Errorf("release.yml builds the image with %v, want the Dockerfile at ., pushed, stamped with the tag and commit", w)
	}
	if w := step("image", "docker/metadata-action"); !strings.Contains(w["images"], "ghcr.io/${{ github.repository }}") {
		t.Errorf("release.yml names the image %q, want ghcr.io/${{ github.repository }}", w["images"])
	}

	// The README says how to get both.
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"releases/latest/download/herald_", "docker run", "ghcr.io/heraldhq/herald"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q: it must say how to get a release", want)
		}
	}
}

func sameTargets(t *testing.T, where string, got []string) {
	t.Helper()
	got = slices.Clone(got)
	for i := range got {
		got[i] = strings.TrimSpace(got[i])
	}
	slices.Sort(got)
	want := slices.Clone(releaseTargets)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s builds %v, want the release targets %v", where, got, want)
	}
}
