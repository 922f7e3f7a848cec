package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// needArgs wants exactly the named positional arguments and, when one is
// missing, says which: "missing EMAIL (usage: herald user add EMAIL ...)".
func needArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return fmt.Errorf("missing argument %s (usage: %s)", strings.Join(names[len(args):], " "), cmd.UseLine())
		}
		if len(args) > len(names) {
			return fmt.Errorf("too many arguments: %s takes %s, got %q (usage: %s)", cmd.CommandPath(), strings.Join(names, " "), args, cmd.UseLine())
		}
		return nil
	}
}

// exitError ends the process with code. The commands return it for an
// outcome a script tells apart by exit status (herald send --wait); err,
// when set, is printed as any other error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode is the status the process ends with for err (nil: 0), and
// whether err has a message to print.
func exitCode(err error) (code int, printIt bool) {
	if err == nil {
		return 0, false
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.err != nil
	}
	return 1, true
}
