package ntfy

import "fmt"

// Codes of the errors ntfy answers a publish with, as its clients know
// them: the HTTP status followed by two digits. Herald's refusals that
// ntfy has no code for use the status followed by 00.
const (
	CodeBadRequest         = 40000
	CodeEmailDisabled      = 40001
	CodeDelayNoCache       = 40002
	CodeDelayCannotParse   = 40004
	CodeDelayTooSmall      = 40005
	CodeDelayTooLarge      = 40006
	CodePriorityInvalid    = 40007
	CodeTopicInvalid       = 40009
	CodeMessageNotUTF8     = 40011
	CodeAttachURLInvalid   = 40013
	CodeAttachDisallowed   = 40014
	CodeJSONInvalid        = 40017
	CodeActionsInvalid     = 40018
	CodeIconURLInvalid     = 40021
	CodeCallsDisabled      = 40032
	CodeUnauthorized       = 40101
	CodeNotFound           = 40401
	CodeTooLarge           = 41301
	CodeTooManyRequests    = 42901
	CodeInternalError      = 50001
	CodeTemplateDisallowed = 40044
)

// ParamError is a publish request ntfy's rules or Herald's refuse: Code is
// ntfy's code for it (its first three digits are the HTTP status) and Msg
// says what was wrong and what to send instead.
type ParamError struct {
	Code int
	Msg  string
}

func (e *ParamError) Error() string { return e.Msg }

// Status is the HTTP status of the error.
func (e *ParamError) Status() int { return e.Code / 100 }

func paramError(code int, format string, args ...any) *ParamError {
	return &ParamError{Code: code, Msg: fmt.Sprintf(format, args...)}
}
