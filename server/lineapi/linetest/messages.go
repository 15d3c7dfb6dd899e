package linetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
)

// Limits of the Messaging API the fake enforces.
const (
	MaxMessages       = 5
	MaxTextLength     = 5000      // text message, UTF-16 code units
	MaxAltTextLength  = 400       // Flex altText
	MaxBubbleBytes    = 30 * 1024 // one bubble's JSON
	MaxCarouselBytes  = 50 * 1024 // a carousel's JSON
	MaxCarouselItems  = 12
	MaxPostbackData   = 300 // bytes
	MaxActionLabel    = 20
	MaxDisplayText    = 300
	MaxActionText     = 300 // message action's text
	maxFlexDepthLimit = 64  // nesting the fake walks before calling the JSON hostile
)

// Message is a delivered message, as decoded from the request.
type Message struct {
	Type    string // "text" or "flex"
	Text    string // text message
	AltText string // flex message
	// Contents is a flex message's container (bubble or carousel), as
	// sent.
	Contents json.RawMessage
	// JSON is the whole message as sent.
	JSON json.RawMessage
}

// Postback is a postback action found in a flex message.
type Postback struct {
	Label, Data, DisplayText string
}

// Postbacks returns the postback actions of a flex message, in document
// order (a bubble's header, hero, body, footer).
func (m Message) Postbacks() []Postback {
	if len(m.Contents) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.Contents, &v) != nil {
		return nil
	}
	var out []Postback
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			if t, _ := v["type"].(string); t == "postback" && key == "action" {
				s := func(k string) string { x, _ := v[k].(string); return x }
				out = append(out, Postback{Label: s("label"), Data: s("data"), DisplayText: s("displayText")})
			}
			for _, k := range []string{"header", "hero", "body", "footer", "contents", "action"} {
				if x, ok := v[k]; ok {
					walk(x, k)
				}
			}
		case []any:
			for _, x := range v {
				walk(x, key)
			}
		}
	}
	walk(v, "")
	return out
}

// Texts returns the text of every flex text component (or of a text
// message), in document order: what a person reads.
func (m Message) Texts() []string {
	if m.Type == "text" {
		return []string{m.Text}
	}
	var v any
	if json.Unmarshal(m.Contents, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if t, _ := v["type"].(string); t == "text" {
				if s, ok := v["text"].(string); ok {
					out = append(out, s)
				}
			}
			for _, k := range []string{"header", "hero", "body", "footer", "contents"} {
				if x, ok := v[k]; ok {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

type textMessage struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	QuickReply json.RawMessage `json:"quickReply"`
	Sender     json.RawMessage `json:"sender"`
	Emojis     json.RawMessage `json:"emojis"`
	QuoteToken string          `json:"quoteToken"`
}

type flexMessage struct {
	Type       string          `json:"type"`
	AltText    string          `json:"altText"`
	Contents   json.RawMessage `json:"contents"`
	QuickReply json.RawMessage `json:"quickReply"`
	Sender     json.RawMessage `json:"sender"`
}

// checkMessages validates a request's messages as LINE does and returns
// them decoded. The error is LINE's message for the 400.
func checkMessages(raw []json.RawMessage) ([]Message, error) {
	if len(raw) == 0 {
		return nil, errors.New("the property, 'messages', in the request body is required and must hold 1 to 5 messages")
	}
	if len(raw) > MaxMessages {
		return nil, fmt.Errorf("size must be between 1 and %d: messages holds %d", MaxMessages, len(raw))
	}
	out := make([]Message, 0, len(raw))
	for i, r := range raw {
		m, err := checkMessage(r)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func checkMessage(raw json.RawMessage) (Message, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Message{}, fmt.Errorf("not a message object: %w", err)
	}
	m := Message{Type: head.Type, JSON: bytes.Clone(raw)}
	switch head.Type {
	case "text":
		var t textMessage
		if err := strict(raw, &t); err != nil {
			return Message{}, err
		}
		if n := utf16Len(t.Text); n == 0 || n > MaxTextLength {
			return Message{}, fmt.Errorf("text: length must be between 1 and %d, is %d", MaxTextLength, n)
		}
		m.Text = t.Text
	case "flex":
		var f flexMessage
		if err := strict(raw, &f); err != nil {
			return Message{}, err
		}
		if n := utf16Len(f.AltText); n == 0 || n > MaxAltTextLength {
			return Message{}, fmt.Errorf("altText: length must be between 1 and %d, is %d", MaxAltTextLength, n)
		}
		if err := checkContainer(f.Contents); err != nil {
			return Message{}, fmt.Errorf("contents: %w", err)
		}
		m.AltText, m.Contents = f.AltText, bytes.Clone(f.Contents)
	case "":
		return Message{}, errors.New("type: must be specified")
	default:
		return Message{}, fmt.Errorf("type: %q is not modelled by linetest (it serves text and flex)", head.Type)
	}
	return m, nil
}

func strict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid message: %w", err)
	}
	return nil
}

// checkContainer validates a flex container: a bubble, or a carousel of
// bubbles, within the size limits, and its components and actions.
func checkContainer(raw json.RawMessage) error {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return errors.New("must be a bubble or carousel object")
	}
	switch v["type"] {
	case "bubble":
		if len(raw) > MaxBubbleBytes {
			return fmt.Errorf("bubble is %d bytes of JSON; the limit is %d", len(raw), MaxBubbleBytes)
		}
		return checkBubble(v, "bubble")
	case "carousel":
		if len(raw) > MaxCarouselBytes {
			return fmt.Errorf("carousel is %d bytes of JSON; the limit is %d", len(raw), MaxCarouselBytes)
		}
		items, _ := v["contents"].([]any)
		if len(items) == 0 || len(items) > MaxCarouselItems {
			return fmt.Errorf("carousel.contents: must hold 1 to %d bubbles", MaxCarouselItems)
		}
		for i, it := range items {
			b, ok := it.(map[string]any)
			if !ok || b["type"] != "bubble" {
				return fmt.Errorf("carousel.contents[%d]: must be a bubble", i)
			}
			if j, _ := json.Marshal(b); len(j) > MaxBubbleBytes {
				return fmt.Errorf("carousel.contents[%d]: bubble is %d bytes of JSON; the limit is %d", i, len(j), MaxBubbleBytes)
			}
			if err := checkBubble(b, fmt.Sprintf("carousel.contents[%d]", i)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("type: %v is not a flex container (bubble or carousel)", v["type"])
}

func checkBubble(b map[string]any, path string) error {
	for _, k := range []string{"header", "body", "footer"} {
		x, ok := b[k]
		if !ok {
			continue
		}
		box, ok := x.(map[string]any)
		if !ok || box["type"] != "box" {
			return fmt.Errorf("%s.%s: must be a box", path, k)
		}
		if err := checkComponent(box, path+"."+k, 0); err != nil {
			return err
		}
	}
	if x, ok := b["hero"]; ok {
		if err := checkComponent(x, path+".hero", 0); err != nil {
			return err
		}
	}
	if x, ok := b["action"]; ok {
		return checkAction(x, path+".action", false)
	}
	return nil
}

func checkComponent(x any, path string, depth int) error {
	if depth > maxFlexDepthLimit {
		return fmt.Errorf("%s: nested too deep", path)
	}
	c, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: must be a component object", path)
	}
	t, _ := c["type"].(string)
	switch t {
	case "box":
		switch c["layout"] {
		case "horizontal", "vertical", "baseline":
		default:
			return fmt.Errorf("%s.layout: must be horizontal, vertical or baseline", path)
		}
		items, ok := c["contents"].([]any)
		if !ok {
			return fmt.Errorf("%s.contents: required array", path)
		}
		for i, it := range items {
			if err := checkComponent(it, fmt.Sprintf("%s.contents[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case "text":
		s, _ := c["text"].(string)
		if _, spans := c["contents"].([]any); s == "" && !spans {
			return fmt.Errorf("%s.text: required (or contents of spans)", path)
		}
	case "button":
		a, ok := c["action"]
		if !ok {
			return fmt.Errorf("%s.action: required", path)
		}
		if err := checkAction(a, path+".action", true); err != nil {
			return err
		}
		return nil
	case "image", "video":
		if s, _ := c["url"].(string); s == "" {
			return fmt.Errorf("%s.url: required", path)
		}
	case "icon", "span", "separator", "filler":
	default:
		return fmt.Errorf("%s.type: %q is not a flex component", path, t)
	}
	if a, ok := c["action"]; ok {
		return checkAction(a, path+".action", false)
	}
	return nil
}

func checkAction(x any, path string, needLabel bool) error {
	a, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: must be an action object", path)
	}
	str := func(k string) string { s, _ := a[k].(string); return s }
	label := str("label")
	if needLabel && label == "" {
		return fmt.Errorf("%s.label: required on a button", path)
	}
	if n := utf16Len(label); n > MaxActionLabel {
		return fmt.Errorf("%s.label: length must be at most %d, is %d", path, MaxActionLabel, n)
	}
	switch str("type") {
	case "postback":
		data := str("data")
		if data == "" || len(data) > MaxPostbackData {
			return fmt.Errorf("%s.data: length must be between 1 and %d bytes, is %d", path, MaxPostbackData, len(data))
		}
		if n := utf16Len(str("displayText")); n > MaxDisplayText {
			return fmt.Errorf("%s.displayText: length must be at most %d, is %d", path, MaxDisplayText, n)
		}
		if str("displayText") != "" && str("text") != "" {
			return fmt.Errorf("%s: displayText and text cannot both be set", path)
		}
	case "message":
		if n := utf16Len(str("text")); n == 0 || n > MaxActionText {
			return fmt.Errorf("%s.text: length must be between 1 and %d, is %d", path, MaxActionText, n)
		}
	case "uri":
		if str("uri") == "" {
			return fmt.Errorf("%s.uri: required", path)
		}
	case "datetimepicker", "clipboard", "camera", "cameraRoll", "location", "richmenuswitch":
	default:
		return fmt.Errorf("%s.type: %q is not an action", path, str("type"))
	}
	return nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}
