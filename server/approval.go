package server

import (
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// approvalJSON is the "approval" object of a message on an approval
// channel: its rule as sent, and where it stands.
type approvalJSON struct {
	Status             string         `json:"status"` // pending, approved, rejected, expired
	RequiredCount      int            `json:"required_count"`
	Approvers          []string       `json:"approvers"`
	WindowSeconds      int            `json:"window_seconds"`
	Deadline           *string        `json:"deadline"`
	ApprovalsReceived  int            `json:"approvals_received"`
	RejectionsReceived int            `json:"rejections_received"`
	Votes              []service.Vote `json:"votes"`
}

func renderApproval(m *store.Message, t service.ApprovalTally) *approvalJSON {
	if m.Approval == nil {
		return nil
	}
	status := m.ApprovalStatus
	if status == "" {
		status = "pending"
	}
	return &approvalJSON{Status: status, RequiredCount: m.Approval.RequiredCount, Approvers: m.Approval.Approvers,
		WindowSeconds: m.Approval.WindowSeconds, Deadline: tsPtr(m.ApprovalDeadline),
		ApprovalsReceived: t.ApprovalsReceived, RejectionsReceived: t.RejectionsReceived, Votes: t.Votes}
}
