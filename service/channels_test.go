package service

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// wantRefusal checks that err is an Invalid refusal whose message contains
// want, or that err is nil when want is "".
func wantRefusal(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v; want accepted", err)
		}
		return
	}
	wantKind(t, err, Invalid, want)
}

// wantKind checks that err is a refusal of kind whose message contains
// want.
func wantKind(t *testing.T, err error, kind Kind, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != kind || !strings.Contains(e.Message, want) {
		t.Fatalf("err = %v; want a refusal of kind %d saying %q", err, kind, want)
	}
}

func TestChannelFieldRules(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 101) // 101 characters, 202 bytes
	for _, c := range []struct {
		name, field, value, want string
	}{
		{"name given", "name", "Backups", ""},
		{"name of 100 characters", "name", strings.Repeat("é", 100), ""},
		{"name empty", "name", "", "name is required"},
		{"name of spaces", "name", " \t ", "name is required"},
		{"name of 101 characters", "name", long, "name is longer than 100 characters"},
		{"icon empty", "icon", "", ""},
		{"icon of 100 characters", "icon", strings.Repeat("é", 100), ""},
		{"icon of 101 characters", "icon", long, "icon is longer than 100 characters"},
		{"no colour", "color", "", ""},
		{"colour in capitals", "color", "#1E90FF", ""},
		{"colour in small letters", "color", "#1e90ff", ""},
		{"colour without #", "color", "1E90FF", "color must be a hex colour like #1E90FF"},
		{"colour of three digits", "color", "#FFF", "color must be a hex colour"},
		{"colour not hex", "color", "#GGGGGG", "color must be a hex colour"},
		{"colour with a newline", "color", "#1E90FF\n", "color must be a hex colour"},
		{"colour by name", "color", "red", "color must be a hex colour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			switch c.field {
			case "name":
				err = checkName("name", c.value)
			case "icon":
				err = checkIcon(c.value)
			case "color":
				err = checkColor(c.value)
			}
			wantRefusal(t, err, c.want)
		})
	}
}

func TestMutedUntilRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		t    time.Time
		want string
	}{
		{"the epoch", time.Unix(0, 0), ""},
		{"now", time.Now(), ""},
		{"the last millisecond of 9999", time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC), ""},
		{"before the epoch", time.Unix(-1, 0), "muted_until must be between 1970-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"},
		{"the year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "muted_until must be between"},
	} {
		t.Run(c.name, func(t *testing.T) { wantRefusal(t, checkTime("muted_until", c.t), c.want) })
	}
}

func TestApprovalRule(t *testing.T) {
	t.Parallel()
	const id = "usr_0123456789abcdefghijABCD"
	many := make([]string, MaxApprovers+1)
	for i := range many {
		many[i] = "a" + strings.Repeat("x", i) + "@example.com"
	}
	for _, c := range []struct {
		name      string
		rule      store.ApprovalRule
		want      string
		approvers []string // as kept, when accepted
	}{
		{"one approver by id", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 1, WindowSeconds: 60}, "", []string{id}},
		{"an email address trimmed and lower-cased",
			store.ApprovalRule{Approvers: []string{" Ann@Example.COM ", id}, RequiredCount: 2, WindowSeconds: 60}, "",
			[]string{"ann@example.com", id}},
		{"a window of one year", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 1, WindowSeconds: MaxApprovalWindow}, "", []string{id}},
		{"the most approvers", store.ApprovalRule{Approvers: many[:MaxApprovers], RequiredCount: 1, WindowSeconds: 60}, "", many[:MaxApprovers]},
		{"no approvers", store.ApprovalRule{RequiredCount: 1, WindowSeconds: 60},
			"approval.approvers must list at least one user", nil},
		{"too many approvers", store.ApprovalRule{Approvers: many, RequiredCount: 1, WindowSeconds: 60},
			"approval.approvers lists more than 100 users", nil},
		{"no required count", store.ApprovalRule{Approvers: []string{id}, WindowSeconds: 60},
			"approval.required_count must be between 1 and the number of approvers (1)", nil},
		{"more required than approvers", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 2, WindowSeconds: 60},
			"approval.required_count must be between 1 and the number of approvers (1)", nil},
		{"no window", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 1},
			"approval.window_seconds must be between 1 and 31536000 (one year)", nil},
		{"a negative window", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 1, WindowSeconds: -1},
			"approval.window_seconds must be between 1", nil},
		{"a window over a year", store.ApprovalRule{Approvers: []string{id}, RequiredCount: 1, WindowSeconds: MaxApprovalWindow + 1},
			"approval.window_seconds must be between 1", nil},
		{"an approver who is neither", store.ApprovalRule{Approvers: []string{"ann"}, RequiredCount: 1, WindowSeconds: 60},
			`approval.approvers: "ann" is neither a user id (usr_...) nor an email address`, nil},
		{"an approver twice", store.ApprovalRule{Approvers: []string{"ann@example.com", "ANN@example.com"}, RequiredCount: 1, WindowSeconds: 60},
			`approval.approvers lists "ANN@example.com" twice`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rule := c.rule
			err := checkApproval(&rule)
			wantRefusal(t, err, c.want)
			if err == nil && !slices.Equal(rule.Approvers, c.approvers) {
				t.Errorf("approvers kept as %q; want %q", rule.Approvers, c.approvers)
			}
		})
	}
}

// TestChannelPatch: a patch is checked field by field in the documented
// order, and what is kept is normalized without touching the caller's rule.
func TestChannelPatch(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	rule := &store.ApprovalRule{Approvers: []string{" Ann@Example.com"}, RequiredCount: 1, WindowSeconds: 60}
	badRule := &store.ApprovalRule{RequiredCount: 1, WindowSeconds: 60}
	for _, c := range []struct {
		name  string
		patch store.ChannelPatch
		want  string
	}{
		{"empty", store.ChannelPatch{}, ""},
		{"every field", store.ChannelPatch{Name: str("  Ops "), Icon: str("🚀"), Color: str("#abcdef"),
			Approval: store.Optional[store.ApprovalRule]{Set: true, Value: rule}, SourceSecret: str("s3cr3t-value"),
			Template: store.Optional[store.Template]{Set: true, Value: &store.Template{Title: "{{.title}}", Body: "b"}}}, ""},
		{"removals", store.ChannelPatch{MutedUntil: store.Optional[time.Time]{Set: true},
			Approval: store.Optional[store.ApprovalRule]{Set: true}, SourceSecret: str(""),
			Template: store.Optional[store.Template]{Set: true}}, ""},
		{"a bad name first", store.ChannelPatch{Name: str(" "), Color: str("red")}, "name is required"},
		{"a bad icon before a bad colour", store.ChannelPatch{Icon: str(strings.Repeat("x", 101)), Color: str("red")}, "icon is longer"},
		{"a bad colour before a bad time", store.ChannelPatch{Color: str("red"),
			MutedUntil: store.Optional[time.Time]{Set: true, Value: &year10000}}, "color must be"},
		{"a bad time before a bad rule", store.ChannelPatch{MutedUntil: store.Optional[time.Time]{Set: true, Value: &year10000},
			Approval: store.Optional[store.ApprovalRule]{Set: true, Value: badRule}}, "muted_until must be between"},
		{"a bad rule before a bad secret", store.ChannelPatch{Approval: store.Optional[store.ApprovalRule]{Set: true, Value: badRule},
			SourceSecret: str("short")}, "approval.approvers must list"},
		{"a bad secret before a bad template", store.ChannelPatch{SourceSecret: str("short"),
			Template: store.Optional[store.Template]{Set: true, Value: &store.Template{}}}, "source_secret must be 8 to 256"},
		{"a bad template", store.ChannelPatch{Template: store.Optional[store.Template]{Set: true, Value: &store.Template{}}}, "template"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.patch
			wantRefusal(t, checkPatch(&p), c.want)
		})
	}

	p := store.ChannelPatch{Name: str("  Ops "), Color: str("#abcdef"), Approval: store.Optional[store.ApprovalRule]{Set: true, Value: rule}}
	if err := checkPatch(&p); err != nil {
		t.Fatal(err)
	}
	if *p.Name != "Ops" || *p.Color != "#ABCDEF" || !slices.Equal(p.Approval.Value.Approvers, []string{"ann@example.com"}) {
		t.Errorf("kept name %q, colour %q, approvers %q; want Ops, #ABCDEF, [ann@example.com]", *p.Name, *p.Color, p.Approval.Value.Approvers)
	}
	if rule.Approvers[0] != " Ann@Example.com" {
		t.Errorf("the caller's rule changed to %q", rule.Approvers)
	}
}
