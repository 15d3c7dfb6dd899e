package audit

import (
	"encoding/json"

	"github.com/agentcraftlab/agentcraft/pii"
)

// Redact is pii.Redact: personal data and long digit runs masked, for text
// headed to audit details.
func Redact(s string) string { return pii.Redact(s) }

// Details encodes m as the JSON object of AuditEvent.Details, passing every
// string in it (keys, values, and strings nested in maps and slices)
// through Redact. Numbers and booleans are kept. A nil or empty map gives
// nil (no details).
func Details(m map[string]any) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(redactValue(m))
	if err != nil {
		// Only a value JSON cannot encode (a channel, a NaN) gets here;
		// say so in the event rather than losing it.
		b, _ = json.Marshal(map[string]string{"details_error": Redact(err.Error())})
	}
	return b
}

func redactValue(v any) any {
	switch v := v.(type) {
	case string:
		return Redact(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[Redact(k)] = redactValue(x)
		}
		return out
	case map[string]int:
		out := make(map[string]int, len(v))
		for k, x := range v {
			out[Redact(k)] = x
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, x := range v {
			out[Redact(k)] = Redact(x)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = Redact(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = redactValue(x)
		}
		return out
	case nil, bool, int, int64, float64:
		return v
	default:
		// Anything else (a struct, an error, a fmt.Stringer) goes through
		// its JSON form, so that its strings are redacted too.
		b, err := json.Marshal(v)
		if err != nil {
			return Redact(err.Error())
		}
		var generic any
		if err := json.Unmarshal(b, &generic); err != nil {
			return nil
		}
		return redactValue(generic)
	}
}
