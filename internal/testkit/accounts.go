package testkit

import "strings"

// BadAccount is an account that Herald's rules refuse, and the words they
// refuse it with. The API (POST /v1/admin/users, the password reset, the
// plan change) and the command line (herald user add, passwd, set-plan)
// must refuse each one, with these same words, and change nothing.
type BadAccount struct {
	Name     string // what is wrong with it
	Email    string
	Password string
	Plan     string // "" leaves the plan to the default
	Message  string // the refusal, word for word
}

// Field is the one thing wrong with the account: "email", "password" or
// "plan".
func (b BadAccount) Field() string {
	switch {
	case strings.HasPrefix(b.Message, "email"):
		return "email"
	case strings.HasPrefix(b.Message, "plan"):
		return "plan"
	}
	return "password"
}

// GoodPassword is a password every rule takes.
const GoodPassword = "correct horse battery"

const (
	badPassword = "password must be 8 to 256 characters"
	badEmail    = "email must be an email address"
	badPlan     = `plan must be "free" or "pro"`
)

// BadAccounts are the refusals the service's tables, the CLI's test and
// the API's test share. Each is wrong in one field only. (An empty
// password is not among them: the command line refuses an empty first
// line of standard input before any rule, as no password given.)
var BadAccounts = []BadAccount{
	{"one-character password", "short@example.com", "x", "", badPassword},
	{"seven-character password", "short@example.com", "1234567", "", badPassword},
	{"seven characters in fourteen bytes", "short@example.com", "ééééééé", "", badPassword},
	{"257-character password", "long@example.com", strings.Repeat("p", 257), "", badPassword},
	{"not an email", "nobody", GoodPassword, "", badEmail},
	{"nothing before the @", "@example.com", GoodPassword, "", badEmail},
	{"nothing after the @", "nobody@", GoodPassword, "", badEmail},
	{"email of 255 characters", strings.Repeat("a", 243) + "@example.com", GoodPassword, "", badEmail},
	{"newline in the email", "x\n@example.com", GoodPassword, "", badEmail},
	{"tab in the email", "t\t2@example.com", GoodPassword, "", badEmail},
	{"control character in the email", "t3@example.com\a", GoodPassword, "", badEmail},
	{"NUL in the password", "nul@example.com", "abc\x00defghij", "", "password must not contain a NUL character (\\u0000)"},
	{"unknown plan", "gold@example.com", GoodPassword, "gold", badPlan},
	{"plan in capitals", "caps@example.com", GoodPassword, "Pro", badPlan},
}
