// Package skipdemo is run by TestAnnounceSkips: a package whose only test
// is skipped through testkit.Skip.
package skipdemo

import (
	"os"
	"testing"

	"github.com/heraldhq/herald/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.AnnounceSkips("skipdemo")
	os.Exit(code)
}

func TestNeedsAThing(t *testing.T) { testkit.Skip(t, "no thing on PATH") }

func TestNeedsItToo(t *testing.T) { testkit.Skip(t, "no thing on PATH") }
