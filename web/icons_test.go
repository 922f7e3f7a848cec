package web

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The app's icons are drawn here, so that they can be made again at any
// size: Herald's "H" in white on its blue. Run
//
//	HERALD_UPDATE_ICONS=1 go test ./web -run TestIcons
//
// to write them into static/icons after a change.

var (
	iconBlue  = color.RGBA{0x1f, 0x6f, 0xeb, 0xff}
	iconWhite = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

// iconSpec is one icon file.
type iconSpec struct {
	name string
	size int
	// safe is the share of the side the letter may fill; rounded draws the
	// blue as a rounded square on transparency (a browser's or desktop's
	// icon), otherwise it fills the square (maskable and Apple icons, which
	// the platform crops itself); badge draws the white letter alone (the
	// monochrome badge of Android's status bar).
	safe    float64
	rounded bool
	badge   bool
}

var iconSpecs = []iconSpec{
	{name: "icon-192.png", size: 192, safe: 0.6, rounded: true},
	{name: "icon-512.png", size: 512, safe: 0.6, rounded: true},
	{name: "maskable-512.png", size: 512, safe: 0.45},
	{name: "apple-touch-icon.png", size: 180, safe: 0.55},
	{name: "badge-96.png", size: 96, safe: 0.8, badge: true},
}

// drawIcon renders spec.
func drawIcon(spec iconSpec) *image.NRGBA {
	n := spec.size
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	radius := 0.0
	if spec.rounded {
		radius = float64(n) * 0.2
	}
	if !spec.badge {
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if insideRounded(float64(x)+0.5, float64(y)+0.5, float64(n), radius) {
					img.Set(x, y, iconBlue)
				}
			}
		}
	}
	// The letter: two uprights and a bar, in a square of side safe*n.
	side := spec.safe * float64(n)
	x0, y0 := (float64(n)-side)/2, (float64(n)-side)/2
	stroke := side * 0.2
	fill := func(ax, ay, bx, by float64) {
		for y := int(ay); y < int(by+0.5); y++ {
			for x := int(ax); x < int(bx+0.5); x++ {
				img.Set(x, y, iconWhite)
			}
		}
	}
	fill(x0+side*0.1, y0, x0+side*0.1+stroke, y0+side)
	fill(x0+side*0.9-stroke, y0, x0+side*0.9, y0+side)
	fill(x0+side*0.1, y0+(side-stroke)/2, x0+side*0.9, y0+(side+stroke)/2)
	return img
}

func insideRounded(x, y, n, r float64) bool {
	if r == 0 {
		return true
	}
	cx, cy := min(max(x, r), n-r), min(max(y, r), n-r)
	dx, dy := x-cx, y-cy
	return dx*dx+dy*dy <= r*r
}

func encodeIcon(t *testing.T, spec iconSpec) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, drawIcon(spec)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIcons: every icon the manifest and the page name is committed, is a
// PNG of its size, and is what drawIcon makes of it now.
func TestIcons(t *testing.T) {
	if os.Getenv("HERALD_UPDATE_ICONS") == "1" {
		for _, spec := range iconSpecs {
			if err := os.WriteFile(filepath.Join("static", "icons", spec.name), encodeIcon(t, spec), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Skip("icons written; run again to check the embedded ones")
	}
	for _, spec := range iconSpecs {
		want := encodeIcon(t, spec)
		got, err := fs.ReadFile(static, "static/icons/"+spec.name)
		if err != nil {
			t.Fatalf("%s is not embedded: %v", spec.name, err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", spec.name, err)
		}
		if cfg.Width != spec.size || cfg.Height != spec.size {
			t.Errorf("%s is %dx%d, want %dx%d", spec.name, cfg.Width, cfg.Height, spec.size, spec.size)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what drawIcon makes; run HERALD_UPDATE_ICONS=1 go test ./web -run TestIcons", spec.name)
		}
	}
}
