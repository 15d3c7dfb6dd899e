package lineapi

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"github.com/agentcraftlab/agentcraft/task"
)

// Limits of a Flex message (LINE's Messaging API reference). The card is
// built to stay inside them; linetest refuses a message that does not.
const (
	MaxAltTextLength     = 400 // altText; LINE's template limit, the stricter one
	MaxPostbackData      = 300 // postback data, bytes
	maxCardTitleLength   = 200
	maxCardSummaryLength = 2000
)

// Postback data keys and decisions of the approval buttons.
const (
	postbackApproval = "approval"
	postbackDecision = "decision"
	decisionApprove  = "approve"
	decisionReject   = "reject"
)

// PostbackData is the data of an approval button: what the webhook's
// postback handler parses back.
func PostbackData(approvalID string, approve bool) string {
	d := decisionReject
	if approve {
		d = decisionApprove
	}
	// Encode sorts the keys: approval=…&decision=…
	return url.Values{postbackApproval: {approvalID}, postbackDecision: {d}}.Encode()
}

// approvalFlex renders an approval card as a Flex bubble with an Approve
// and a Reject button.
func (c *Channel) approvalFlex(card task.ApprovalCard) (*messaging_api.FlexMessage, error) {
	if card.ID == "" {
		return nil, errors.New("approval card has no id")
	}
	approve, reject := PostbackData(card.ID, true), PostbackData(card.ID, false)
	if len(reject) > MaxPostbackData || len(approve) > MaxPostbackData {
		return nil, fmt.Errorf("approval id of %d bytes makes postback data longer than LINE's %d bytes", len(card.ID), MaxPostbackData)
	}
	summary := cmp.Or(card.Summary, card.TaskTitle, "a step of task "+card.TaskID)
	body := []messaging_api.FlexComponentInterface{
		&messaging_api.FlexText{Text: "Approval needed", Size: "sm", Color: "#888888"},
		&messaging_api.FlexText{Text: truncate(cmp.Or(card.TaskTitle, "Task "+card.TaskID), maxCardTitleLength), Weight: messaging_api.FlexTextWEIGHT_BOLD, Size: "lg", Wrap: true, Margin: "md"},
		&messaging_api.FlexText{Text: truncate(summary, maxCardSummaryLength), Wrap: true, Margin: "md"},
	}
	if card.Capability != "" {
		body = append(body, &messaging_api.FlexText{Text: "Capability: " + card.Capability, Size: "sm", Color: "#555555", Margin: "md"})
	}
	if card.ExpiresAt != nil {
		body = append(body, &messaging_api.FlexText{Text: "Expires: " + card.ExpiresAt.In(c.loc).Format("2006-01-02 15:04 MST"), Size: "sm", Color: "#555555"})
	}
	return &messaging_api.FlexMessage{
		AltText: truncate("Approval needed: "+summary, MaxAltTextLength),
		Contents: &messaging_api.FlexBubble{
			Body: &messaging_api.FlexBox{Layout: messaging_api.FlexBoxLAYOUT_VERTICAL, Contents: body},
			Footer: &messaging_api.FlexBox{
				Layout:  messaging_api.FlexBoxLAYOUT_HORIZONTAL,
				Spacing: "md",
				Contents: []messaging_api.FlexComponentInterface{
					&messaging_api.FlexButton{Flex: 1, Style: messaging_api.FlexButtonSTYLE_PRIMARY, Action: &messaging_api.PostbackAction{Label: "Approve", Data: approve, DisplayText: "Approve"}},
					&messaging_api.FlexButton{Flex: 1, Style: messaging_api.FlexButtonSTYLE_SECONDARY, Action: &messaging_api.PostbackAction{Label: "Reject", Data: reject, DisplayText: "Reject"}},
				},
			},
		},
	}, nil
}
