package pii

// Entity is one piece of personal data found in a text.
type Entity struct {
	Type   string  // what the value is, upper case: "EMAIL", "PHONE", "NATIONAL_ID" …
	Locale string  // "Global", "TW", "JP", "KR", "US" or "UK"
	Rule   string  // the rule that matched, "Locale.Name": "Global.Email"
	Start  int     // byte offset of the first byte in the scanned text
	End    int     // byte offset just past the last byte
	Score  float64 // confidence in [0, 1]
}

// Detector finds personal data. Scan returns non-overlapping entities
// ordered by Start; offsets are byte offsets into text.
type Detector interface {
	Scan(text string) []Entity
}

// TokenVault maps tokens to the values they stand for, for one
// conversation. Implementations must be safe for concurrent use.
type TokenVault interface {
	// Token returns the token for value, creating one such as "[EMAIL_1]"
	// from typ (upper case letters, digits and '_') on first use; the same
	// value always gets the same token.
	Token(typ, value string) string
	// Value returns the value a token stands for.
	Value(token string) (value string, ok bool)
}
