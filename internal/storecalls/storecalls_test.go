package storecalls

import (
	"testing"
)

// TestWrites: the writers found in the store's source are the methods that
// change the database, including ReadResponse, whose name does not say
// so (an answer is read once), and none of the reads.
func TestWrites(t *testing.T) {
	w, err := Writes("../../store")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"CreateSession", "RotateSession", "DeleteUserSessions", "TouchAPIKeys", "EnsureSetting",
		"ReadResponse", "CreateMessage", "SetUserPassword", "Vacuum"} {
		if !w[m] {
			t.Errorf("%s is not among the writes %v", m, Sorted(w))
		}
	}
	for _, m := range []string{"UserByID", "Votes", "SessionByAccessHash", "ListChannelsPage", "CredentialChanges",
		"Close", "Backup", "Ping", "HasUsers"} {
		if w[m] {
			t.Errorf("the read %s is among the writes", m)
		}
	}
}

func TestNamedWrite(t *testing.T) {
	for name, want := range map[string]bool{"Pin": true, "PinChannel": true, "Ping": false, "TakeRateToken": true,
		"SetUserPlan": true, "Settings": false, "Update": true, "UserByID": false, "IndexForSearch": true} {
		if got := NamedWrite(name); got != want {
			t.Errorf("NamedWrite(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCalls: the server's calls are found through its fields, method
// values included (the hub's feed is s.st.FollowEvents, not called there).
func TestCalls(t *testing.T) {
	c, err := Calls("../../server")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"FollowEvents", "ListChannelsPage", "Ping"} {
		if len(c[m]) == 0 {
			t.Errorf("%s not found among the server's store calls %v", m, Sorted(c))
		}
	}
}
