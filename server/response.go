package server

import (
	"encoding/json"
	"fmt"
)

// storedResponse is a message's stored answer, decoded. Two shapes are
// stored. A plain response is the callbackResult object itself. A resolved
// approval stores a storedApproval, {"result": <callbackResult>,
// "approval_status": ..., "approval": <approvalSummary>}, so that polling
// shows the outcome beside the result. A callbackResult has no "result"
// member, so that member tells the shapes apart.
type storedResponse struct {
	// Result is the callback result, as stored.
	Result json.RawMessage
	// Approval is what a resolved approval keeps beside its result; nil for
	// a plain response.
	Approval *storedOutcome
}

// storedOutcome is the approval part of a storedApproval. The summary stays
// raw: polling returns it as stored.
type storedOutcome struct {
	Status  string          // approval_status: approved or rejected
	Summary json.RawMessage // approval: the approvalSummary
}

// decodeStoredResponse decodes a stored answer of either shape. It fails on
// anything that is not a JSON object (or null, which is a plain response
// of null).
func decodeStoredResponse(raw []byte) (storedResponse, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return storedResponse{}, fmt.Errorf("server: stored response: %w", err)
	}
	result, ok := members["result"]
	if !ok {
		return storedResponse{Result: raw}, nil
	}
	out := storedResponse{Result: result}
	status, summary := members["approval_status"], members["approval"]
	if status == nil && summary == nil {
		return out, nil
	}
	out.Approval = &storedOutcome{Summary: summary}
	if status != nil {
		if err := json.Unmarshal(status, &out.Approval.Status); err != nil {
			return storedResponse{}, fmt.Errorf("server: stored response: approval_status: %w", err)
		}
	}
	return out, nil
}
