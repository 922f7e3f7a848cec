package service

import (
	"errors"
	"fmt"

	"github.com/heraldhq/herald/store"
)

// Kind is what went wrong, in terms a caller can act on. The HTTP layer
// turns each kind into its status and error code.
type Kind int

// The kinds of Error.
const (
	// Invalid: the request breaks a rule (400 invalid_payload).
	Invalid Kind = iota + 1
	// Forbidden: the caller sees the thing but may not do this (403).
	Forbidden
	// Conflict: the thing is no longer in a state that allows this (409,
	// with Error.Code).
	Conflict
	// NotFound: the thing asked for does not exist, said in words that
	// name it (404 not_found). A thing the caller may not see is
	// ErrNotFound instead, which says nothing more.
	NotFound
	// Unavailable: a service Herald must ask did not answer; the caller
	// may try again later (503, with Error.Code).
	Unavailable
	// Unauthenticated: the credential presented signs nobody in (401
	// invalid_token).
	Unauthenticated
	// TooLarge: a file is larger than a limit allows, or would take its
	// owner over their quota (413, with Error.Code).
	TooLarge
)

// Error is a refusal a caller is meant to read: its Kind, a code for
// conflicts (already_responded, already_voted) and for unavailability
// (provider_unavailable), and a message that says what to do. Anything that is not an *Error (or store.ErrNotFound, for a
// thing the caller may not see) is an internal failure.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	cause   error // what errors.Is also finds, e.g. ErrRefreshReused
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the cause of a refusal, if it has one to tell.
func (e *Error) Unwrap() error { return e.cause }

// ErrNotFound is a thing that does not exist or that the caller may not see:
// the two look the same, so that ids of other users' things are not revealed.
var ErrNotFound = store.ErrNotFound

func invalid(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *Error {
	return &Error{Kind: Forbidden, Message: fmt.Sprintf(format, args...)}
}

func conflict(code, format string, args ...any) *Error {
	return &Error{Kind: Conflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf(format, args...)}
}

func unauthenticated(format string, args ...any) *Error {
	return &Error{Kind: Unauthenticated, Message: fmt.Sprintf(format, args...)}
}

func unavailable(code, format string, args ...any) *Error {
	return &Error{Kind: Unavailable, Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is the text of a refusal made by this package.
func message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
