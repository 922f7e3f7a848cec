package server

import (
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/store"
)

// timeFormat is RFC 3339 in UTC with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

func tsPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

// chars counts Unicode characters, which is what every length limit counts.
func chars(s string) int { return utf8.RuneCountInString(s) }

type userJSON struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	Plan      string `json:"plan"`
	IsAdmin   bool   `json:"is_admin"`
	CreatedAt string `json:"created_at"`
}

func renderUser(u *store.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Name: u.Name, Plan: u.Plan, IsAdmin: u.IsAdmin, CreatedAt: ts(u.CreatedAt)}
}
