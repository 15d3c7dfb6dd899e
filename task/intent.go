package task

// Intent is a request in structured form.
type Intent struct {
	// Action is what to do, a verb: "search", "answer", "schedule",
	// "remind", or another word an agent handles.
	Action string `json:"action"`
	// Object is what the action is about: "calendar_event", "reminder",
	// "document", "question", …
	Object string `json:"object"`
	// Target is the specifics: the question, the event's title, the topic.
	Target string `json:"target"`
	// Actor is who asked (Requester.Actor).
	Actor string `json:"actor"`
	// Raw is the text as asked.
	Raw string `json:"raw"`
	// Workspace is the workspace id.
	Workspace string `json:"workspace"`
	// When is the time the request names (an event's start, a reminder's
	// moment) as RFC 3339, when it names one.
	When string `json:"when,omitempty"`
	// Duration is an event's length ("1h"), when named.
	Duration string `json:"duration,omitempty"`
	// NeedsClarification is set when the text does not say enough to act;
	// Question is then what to ask.
	NeedsClarification bool   `json:"needs_clarification,omitempty"`
	Question           string `json:"question,omitempty"`
}
