package secret

import (
	"fmt"
	"io"
	"log/slog"
)

// Redacted is what a Secret prints instead of its value.
const Redacted = "[REDACTED]"

// Secret holds a sensitive string, such as an API key, in memory. Every
// way of printing it — fmt verbs, slog, encoding/json, encoding.TextMarshaler
// users — gives Redacted; Reveal gives the value. Decoding JSON into a
// Secret works as for a string, so configuration can hold secrets.
//
// Two holes come with it being a string type: fmt cannot call methods on
// unexported struct fields, so printing a struct with an unexported Secret
// field shows the value; and encoding/json writes map keys of string kind
// as they are. Keep Secret fields exported and never use a Secret as a map
// key.
type Secret string

// Reveal returns the value. Call it only where the value is used, such as
// when setting an Authorization header.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer (%#v).
func (Secret) GoString() string { return Redacted }

// Format implements fmt.Formatter, so that no verb (%x, %q, %d …) prints
// the value.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, Redacted) }

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalJSON implements json.Marshaler.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler, for encoders other than
// encoding/json (YAML, XML, map keys).
func (Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }
