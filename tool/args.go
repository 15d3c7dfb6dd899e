package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxArgsBytes bounds the arguments a built-in tool accepts, in bytes of
// JSON, so that a runaway model cannot make a tool parse megabytes.
const MaxArgsBytes = 1 << 20

// argSchema is a tool's argument schema, compiled once, with an example of
// valid arguments that error results quote.
type argSchema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
	example  string
}

// mustArgSchema compiles a built-in tool's schema. The schemas are
// constants of this package and a test compiles every one, so a failure is
// a programming error found before release, never input.
func mustArgSchema(name, schema, example string) *argSchema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema is not JSON: %v", name, err))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///tool/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", name, err))
	}
	compiled, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", name, err))
	}
	return &argSchema{raw: json.RawMessage(schema), compiled: compiled, example: example}
}

// parse decodes args, the JSON object a model wrote, into dst (a pointer
// to a struct with json tags matching the schema). It returns ok == false
// and an error Result, worded for the model, when the arguments are not
// JSON, not an object, or do not match the schema; the Result names the
// field and quotes an example of valid arguments.
//
// Empty arguments and null mean {}. Two slips models make often are
// repaired, because the repair cannot change what a well-formed document
// means: a Markdown code fence around the JSON, and trailing commas before
// '}' or ']'. Anything else (single quotes, comments, unquoted keys) is
// returned to the model to fix, since guessing could pass a value the
// model did not write.
//
// Unknown fields are refused (the schemas say additionalProperties:
// false): a misspelt optional argument such as "max_byte" would otherwise
// be ignored silently and the model would believe it had been applied.
func (s *argSchema) parse(args json.RawMessage, dst any) (Result, bool) {
	text, res, ok := checkArgs(args, s.compiled, "like "+s.example, " Example: "+s.example)
	if !ok {
		return res, false
	}
	if err := json.Unmarshal(text, dst); err != nil {
		// The schema accepted the document, so this is a number that
		// does not fit its Go field (such as 1e400 for an int).
		return ErrorResult("invalid arguments: %v. Example: %s", jsonMessage(err), s.example), false
	}
	return Result{}, true
}

// checkArgs is the shared part of argSchema.parse and CheckArguments: it
// bounds, repairs, decodes and validates args (schema may be nil) and
// returns the JSON text to decode. like ends "write a JSON object ..."
// and example is appended to schema errors.
func checkArgs(args json.RawMessage, schema *jsonschema.Schema, like, example string) ([]byte, Result, bool) {
	if len(args) > MaxArgsBytes {
		return nil, ErrorResult("arguments are %d bytes, more than the limit of %d: pass less data", len(args), MaxArgsBytes), false
	}
	text := bytes.TrimSpace(args)
	if len(text) == 0 || string(text) == "null" {
		text = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		repaired, changed := repairJSON(text)
		if !changed {
			return nil, ErrorResult("arguments are not valid JSON (%v): write a JSON object %s", jsonMessage(err), like), false
		}
		doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(repaired))
		if err != nil {
			return nil, ErrorResult("arguments are not valid JSON (%v): write a JSON object %s", jsonMessage(err), like), false
		}
		text = repaired
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, ErrorResult("arguments must be a JSON object %s, not %s", like, jsonKind(doc)), false
	}
	if schema != nil {
		if err := schema.Validate(doc); err != nil {
			return nil, ErrorResult("invalid arguments: %s.%s", explainSchemaError(err), example), false
		}
	}
	return text, Result{}, true
}

// CheckArguments prepares args, the JSON a model wrote for a call of a tool
// whose argument schema is schema (Tool.Schema), before the tool sees them.
// It returns the arguments to pass to Tool.Call, or ok == false and an
// error Result, worded for the model, naming what is wrong: arguments that
// are not JSON, not an object, or do not match the schema.
//
// It repairs what argSchema.parse repairs (a Markdown code fence around the
// JSON, trailing commas) and reads empty arguments and null as {}. A nil
// or empty schema accepts any object. A schema that does not compile (a
// foreign tool's schema using a feature the validator lacks, or a remote
// $ref) is not enforced: the tool still validates its own arguments, and
// refusing every call of a working tool would be worse. Schemas are
// compiled once and cached by their text; $ref is never followed outside
// the schema, so a tool's schema cannot make the server read a file.
func CheckArguments(schema, args json.RawMessage) (json.RawMessage, Result, bool) {
	text, res, ok := checkArgs(args, compileForeign(schema), "that matches the tool's parameters schema", "")
	return text, res, ok
}

// foreignSchemas caches compiled schemas of tools by schema text; a nil
// value records a schema that did not compile. Tools are configured, not
// created per request, so the cache stays as small as the set of tools;
// maxForeignSchemas bounds it anyway.
var (
	foreignSchemas    sync.Map // string → *jsonschema.Schema
	foreignSchemaN    atomic.Int64
	maxForeignSchemas = int64(4096)
)

func compileForeign(schema json.RawMessage) *jsonschema.Schema {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 || string(schema) == "null" || string(schema) == "{}" {
		return nil
	}
	if v, ok := foreignSchemas.Load(string(schema)); ok {
		return v.(*jsonschema.Schema)
	}
	compiled := compileSchema(schema)
	if foreignSchemaN.Load() < maxForeignSchemas {
		if _, loaded := foreignSchemas.LoadOrStore(string(schema), compiled); !loaded {
			foreignSchemaN.Add(1)
		}
	}
	return compiled
}

// compileSchema compiles schema, or returns nil when it does not compile.
func compileSchema(schema []byte) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "mem:///tool/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil
	}
	return compiled
}

// noLoader refuses every external $ref: the default loader would read
// file:// URLs named by a tool's (possibly remote, MCP) schema.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %s is outside the schema", url)
}

// repairJSON removes a Markdown code fence around text and commas that
// directly precede '}' or ']' outside strings. changed reports whether it
// altered anything.
func repairJSON(text []byte) (out []byte, changed bool) {
	s := strings.TrimSpace(string(text))
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		// ```json\n{...}\n``` : drop the info string up to the newline.
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			if body, ok := strings.CutSuffix(strings.TrimSpace(rest[i+1:]), "```"); ok {
				s = strings.TrimSpace(body)
				changed = true
			}
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				changed = true
				continue
			}
		}
		b.WriteByte(c)
	}
	return []byte(b.String()), changed
}

// jsonMessage shortens decoder errors to what helps the model.
func jsonMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%q: %s does not fit (want %s)", te.Field, te.Value, te.Type)
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "jsonschema: ")
	return msg
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

var schemaPrinter = message.NewPrinter(language.English)

// explainSchemaError lists the leaf failures of a validation error, each
// naming the argument it is about.
func explainSchemaError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		field := strings.Join(e.InstanceLocation, ".")
		var msg string
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			msg = "missing required argument " + quoteJoin(prefixed(field, k.Missing))
		case *kind.AdditionalProperties:
			msg = "unknown argument " + quoteJoin(prefixed(field, k.Properties))
		case *kind.Type:
			msg = fmt.Sprintf("%q must be %s, not %s", orArgs(field), strings.Join(k.Want, " or "), k.Got)
		default:
			msg = fmt.Sprintf("%q: %s", orArgs(field), e.ErrorKind.LocalizedString(schemaPrinter))
		}
		msgs = append(msgs, msg)
	}
	walk(ve)
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	return strings.Join(msgs, "; ")
}

func prefixed(field string, names []string) []string {
	if field == "" {
		return names
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = field + "." + n
	}
	return out
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func orArgs(field string) string {
	if field == "" {
		return "arguments"
	}
	return field
}

// DecodeArguments checks args against schema as CheckArguments does and
// decodes them into dst (a pointer to a struct with json tags matching
// the schema). ok == false comes with the error Result for the model,
// ending with example: the one way a tool outside this package reads its
// arguments.
func DecodeArguments(schema json.RawMessage, example string, args json.RawMessage, dst any) (Result, bool) {
	text, res, ok := CheckArguments(schema, args)
	if !ok {
		res.Content += " Example: " + example
		return res, false
	}
	if err := json.Unmarshal(text, dst); err != nil {
		return ErrorResult("invalid arguments: %v. Example: %s", jsonMessage(err), example), false
	}
	return Result{}, true
}
