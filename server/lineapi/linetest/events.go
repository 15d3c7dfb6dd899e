package linetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Event is one webhook event object, as LINE sends it. Build it with
// TextEvent, PostbackEvent, FollowEvent or StickerEvent, or write the map
// for any other type.
type Event map[string]any

// EventOption changes a built event.
type EventOption func(Event)

// InGroup makes the event come from a member of a group chat.
func InGroup(groupID string) EventOption {
	return func(e Event) { e["source"] = map[string]any{"type": "group", "groupId": groupID, "userId": e.userID()} }
}

// InRoom makes the event come from a member of a multi-person chat.
func InRoom(roomID string) EventOption {
	return func(e Event) { e["source"] = map[string]any{"type": "room", "roomId": roomID, "userId": e.userID()} }
}

// Redelivered marks the event as LINE's redelivery of one not answered
// with 200 before.
func Redelivered() EventOption {
	return func(e Event) { e["deliveryContext"] = map[string]any{"isRedelivery": true} }
}

// WithReplyToken sets the event's reply token (Server.IssueReplyToken).
func WithReplyToken(token string) EventOption {
	return func(e Event) { e["replyToken"] = token }
}

// At sets the event's timestamp; default is the time of the build.
func At(t time.Time) EventOption {
	return func(e Event) { e["timestamp"] = t.UnixMilli() }
}

// Standby marks the event as received in standby mode (another channel
// of a module is active).
func Standby() EventOption {
	return func(e Event) { e["mode"] = "standby"; delete(e, "replyToken") }
}

func (e Event) userID() string {
	src, _ := e["source"].(map[string]any)
	id, _ := src["userId"].(string)
	return id
}

func newEvent(typ, webhookEventID, userID string) Event {
	e := Event{
		"type":            typ,
		"mode":            "active",
		"timestamp":       time.Now().UnixMilli(),
		"source":          map[string]any{"type": "user", "userId": userID},
		"webhookEventId":  webhookEventID,
		"deliveryContext": map[string]any{"isRedelivery": false},
	}
	if userID == "" {
		e["source"] = map[string]any{"type": "user"}
	}
	return e
}

func apply(e Event, opts []EventOption) Event {
	for _, o := range opts {
		o(e)
	}
	return e
}

// TextEvent is a text message event from userID.
func TextEvent(webhookEventID, userID, text string, opts ...EventOption) Event {
	e := newEvent("message", webhookEventID, userID)
	e["message"] = map[string]any{"type": "text", "id": "m" + webhookEventID, "quoteToken": "q" + webhookEventID, "text": text}
	return apply(e, opts)
}

// PostbackEvent is a postback event from userID (a button pressed).
func PostbackEvent(webhookEventID, userID, data string, opts ...EventOption) Event {
	e := newEvent("postback", webhookEventID, userID)
	e["postback"] = map[string]any{"data": data}
	return apply(e, opts)
}

// StickerEvent is a sticker message event from userID.
func StickerEvent(webhookEventID, userID string, opts ...EventOption) Event {
	e := newEvent("message", webhookEventID, userID)
	e["message"] = map[string]any{"type": "sticker", "id": "m" + webhookEventID, "quoteToken": "q" + webhookEventID,
		"packageId": "446", "stickerId": "1988", "stickerResourceType": "STATIC"}
	return apply(e, opts)
}

// FollowEvent is userID adding the bot as a friend.
func FollowEvent(webhookEventID, userID string, opts ...EventOption) Event {
	e := newEvent("follow", webhookEventID, userID)
	e["follow"] = map[string]any{"isUnblocked": false}
	return apply(e, opts)
}

// Body is the webhook request body LINE sends to the bot destination
// (its user id) with events; no events is LINE's verify request.
func Body(destination string, events ...Event) []byte {
	if events == nil {
		events = []Event{}
	}
	b, err := json.Marshal(map[string]any{"destination": destination, "events": events})
	if err != nil {
		panic("linetest: events do not marshal: " + err.Error()) // only a test's own map can cause it
	}
	return b
}

// UserID, GroupID and RoomID return a well-formed LINE id ("U", "C" or
// "R" and 32 hex digits) derived from name, for readable tests.
func UserID(name string) string  { return chatID('U', name) }
func GroupID(name string) string { return chatID('C', name) }
func RoomID(name string) string  { return chatID('R', name) }

func chatID(prefix byte, name string) string {
	h := sha256.Sum256([]byte(name))
	return string(prefix) + hex.EncodeToString(h[:16])
}
