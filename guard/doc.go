// Package guard decides whether a chat request, and optionally the model's
// output, may pass.
//
// A [Policy] looks at an [Input] (the conversation's messages and the
// direction being checked) and returns a [Decision]: allow, log, warn or
// block, with the [Match] values that led to it. [Filter] is the default
// Policy; an ML classifier can replace it by implementing the same one-method
// interface.
//
// A Filter combines four checks, built once by [New]:
//
//   - keyword rules: substring matches on folded text (Latin letters are
//     lower-cased, full-width ASCII is narrowed, zero-width characters are
//     dropped, runs of white space become one), so they work for Chinese and
//     Japanese, where there are no word boundaries to rely on;
//   - regular-expression rules, compiled once and run on the original text;
//   - prompt-injection detection (opt-in, [Options].Injection), a set of
//     English, Chinese and Japanese pattern families scored by context so
//     that questions about attacks and quoted text pass (see injection.go);
//   - a topic allow-list ([Options].Topics): a request whose last user
//     message names none of the allowed topics' keywords is refused.
//
// On input, every user message of the conversation is scanned, not only the
// last one, so an attack planted in an earlier turn is still caught. The
// strongest action of all matches wins: block > warn > log > allow.
//
// Model output is checked as it streams with [NewStreamScanner], which holds
// back the last runes of the output until they have been scanned, so a
// blocked phrase never reaches the client even when it is split across
// chunks.
//
// Check is pure: it records nothing. Callers write the audit trail from the
// returned decision with [Decision.WriteAudit], one line per match:
//
//	[GUARD] direction=input action=block rule="injection/ignore_previous" kind=injection match_len=32
//
// The lines name the rule and the matched text's length, never the text.
//
// Typical use in a request handler:
//
//	f, err := guard.New(&guard.Options{Rules: rules, Injection: true})
//	...
//	d := f.Check(ctx, guard.Input{Direction: guard.DirectionInput, Messages: msgs})
//	d.WriteAudit(auditLog, guard.DirectionInput)
//	if d.Action == guard.Block {
//		return d.Message // send the refusal instead of calling the model
//	}
package guard
