package guard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DefaultBlockMessage is the refusal sent when a rule blocks and neither the
// rule nor the options name another.
const DefaultBlockMessage = "Sorry, I can't help with that request."

// DefaultOffTopicMessage is the refusal for off-topic requests.
const DefaultOffTopicMessage = "Sorry, I can only help with questions about the topics this assistant covers."

// Rule is one keyword or regular-expression rule. Exactly one of Keywords
// and Pattern is set.
type Rule struct {
	// Name identifies the rule in matches and audit lines. Required.
	Name string
	// Keywords fire when any of them occurs in the folded text (see
	// [Filter]). Matching is by substring, so "kill" also matches
	// "skill"; add the spaces you mean (" kill ") for Latin words.
	Keywords []string
	// Pattern is a regular expression (RE2 syntax) run on the original,
	// unfolded text; start it with (?i) for case-insensitive matching.
	Pattern string
	// Action when the rule fires. Default (zero) is Allow, which makes the
	// rule inert, so New rejects it: name log, warn or block.
	Action Action
	// Message is the refusal for Block; empty means Options.BlockMessage.
	Message string
	// Direction limits the rule to input or output; zero means both.
	Direction Direction
}

// Topic is one subject an assistant may talk about, named by keywords.
type Topic struct {
	Name     string
	Keywords []string // folded substrings, as for Rule.Keywords
}

// Options configure a Filter. The zero value (or nil) allows everything.
type Options struct {
	// Rules are the keyword and regex rules. Default none.
	Rules []Rule
	// BlockMessage is the refusal for blocking rules and injection.
	// Default DefaultBlockMessage.
	BlockMessage string

	// Injection turns on prompt-injection detection of user messages.
	// Default off.
	Injection bool
	// InjectionAction is the action for a detected injection. Default
	// (zero) means Block.
	InjectionAction Action

	// Topics, when not empty, is the allow-list: a request whose last user
	// message contains none of any topic's keywords is refused. Default
	// empty, which allows every topic.
	Topics []Topic
	// OffTopicMessage is the refusal for off-topic requests. Default
	// DefaultOffTopicMessage.
	OffTopicMessage string
}

// Filter is the default Policy: keyword and regex rules, prompt-injection
// detection and a topic allow-list. It is safe for concurrent use.
type Filter struct {
	keywords []keywordRule
	regexes  []regexRule

	blockMessage    string
	injection       bool
	injectionAction Action
	topics          [][]string // folded keywords per topic
	offTopicMessage string
}

type keywordRule struct {
	rule     *Rule
	keywords []string // folded, non-empty
}

type regexRule struct {
	rule *Rule
	re   *regexp.Regexp
	pre  prefilter // skips re when its required literals are absent
}

// New builds a Filter, compiling every rule once. It reports all invalid
// rules together.
func New(opts *Options) (*Filter, error) {
	if opts == nil {
		opts = &Options{}
	}
	f := &Filter{
		blockMessage:    cmp.Or(opts.BlockMessage, DefaultBlockMessage),
		injection:       opts.Injection,
		injectionAction: opts.InjectionAction,
		offTopicMessage: cmp.Or(opts.OffTopicMessage, DefaultOffTopicMessage),
	}
	if f.injectionAction == Allow {
		f.injectionAction = Block
	}
	var errs []error
	for i := range opts.Rules {
		// Copy, so later changes to the caller's options don't reach us.
		r := opts.Rules[i]
		r.Keywords = nil
		where := fmt.Sprintf("rules[%d] %q", i, r.Name)
		switch {
		case r.Name == "":
			errs = append(errs, fmt.Errorf("guard: rules[%d]: name is empty: give every rule a name for audit lines", i))
			continue
		case r.Action <= Allow || r.Action > Block:
			errs = append(errs, fmt.Errorf("guard: %s: action %v: want log, warn or block", where, r.Action))
			continue
		case r.Direction&^(DirectionInput|DirectionOutput) != 0:
			errs = append(errs, fmt.Errorf("guard: %s: unknown direction %d: want input, output or zero for both", where, int(r.Direction)))
			continue
		case (len(opts.Rules[i].Keywords) > 0) == (r.Pattern != ""):
			errs = append(errs, fmt.Errorf("guard: %s: set exactly one of keywords and pattern", where))
			continue
		}
		if r.Direction == 0 {
			r.Direction = DirectionInput | DirectionOutput
		}
		if r.Pattern != "" {
			re, err := regexp.Compile(r.Pattern)
			if err != nil {
				errs = append(errs, fmt.Errorf("guard: %s: compile pattern: %w", where, err))
				continue
			}
			f.regexes = append(f.regexes, regexRule{rule: &r, re: re, pre: newPrefilter(r.Pattern)})
			continue
		}
		kr := keywordRule{rule: &r}
		for j, k := range opts.Rules[i].Keywords {
			fk := strings.TrimSpace(foldString(k))
			if fk == "" {
				errs = append(errs, fmt.Errorf("guard: %s: keywords[%d] is blank", where, j))
				continue
			}
			// Keep a deliberate surrounding space (" kill ") as a cheap word boundary.
			if strings.HasPrefix(k, " ") {
				fk = " " + fk
			}
			if strings.HasSuffix(k, " ") {
				fk += " "
			}
			kr.keywords = append(kr.keywords, fk)
		}
		f.keywords = append(f.keywords, kr)
	}
	for i, t := range opts.Topics {
		var kws []string
		for _, k := range t.Keywords {
			if fk := strings.TrimSpace(foldString(k)); fk != "" {
				kws = append(kws, fk)
			}
		}
		if len(kws) == 0 {
			errs = append(errs, fmt.Errorf("guard: topics[%d] %q: no keywords: an empty topic would match nothing", i, t.Name))
			continue
		}
		f.topics = append(f.topics, kws)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// Check implements Policy. On input it scans every user message with the
// rules and, if enabled, the injection detector, and checks the last user
// message against the topic allow-list; on output it scans every assistant
// message with the rules.
func (f *Filter) Check(ctx context.Context, in Input) Decision {
	var d Decision
	// Anything but output is checked as input: an unset direction must not
	// skip every rule.
	dir, role := DirectionInput, RoleUser
	if in.Direction == DirectionOutput {
		dir, role = DirectionOutput, RoleAssistant
	}
	lastUser := -1
	for i, m := range in.Messages {
		if m.Role != role && !(role == RoleUser && m.Role == "") {
			continue
		}
		if ctx.Err() != nil {
			// A caller that gave up gets a refusal, never an unchecked pass.
			return Decision{Action: Block, Message: f.blockMessage}
		}
		lastUser = i
		fm := fold(m.Text)
		f.scanRules(&d, fm, dir)
		if f.injection && dir == DirectionInput {
			for _, im := range detectInjection(fm) {
				d.add(Match{Rule: "injection/" + im.family, Kind: KindInjection, Match: im.text, Action: f.injectionAction}, f.blockMessage)
			}
		}
	}
	if len(f.topics) > 0 && dir == DirectionInput && lastUser >= 0 {
		text := in.Messages[lastUser].Text
		if !f.onTopic(foldString(text)) {
			d.add(Match{Rule: "topic", Kind: KindTopic, Match: truncate(strings.TrimSpace(text)), Action: Block}, f.offTopicMessage)
		}
	}
	return d
}

func (f *Filter) scanRules(d *Decision, fm folded, dir Direction) {
	for _, kr := range f.keywords {
		if kr.rule.Direction&dir == 0 {
			continue
		}
		for _, k := range kr.keywords {
			if i := strings.Index(fm.text, k); i >= 0 {
				d.add(Match{Rule: kr.rule.Name, Kind: KindKeyword, Match: fm.original(i, i+len(k)), Action: kr.rule.Action}, cmp.Or(kr.rule.Message, f.blockMessage))
				break
			}
		}
	}
	for _, rr := range f.regexes {
		if rr.rule.Direction&dir == 0 {
			continue
		}
		if !rr.pre.mayMatch(fm.orig, fm.text) {
			continue
		}
		if loc := rr.re.FindStringIndex(fm.orig); loc != nil {
			d.add(Match{Rule: rr.rule.Name, Kind: KindRegex, Match: truncate(fm.orig[loc[0]:loc[1]]), Action: rr.rule.Action}, cmp.Or(rr.rule.Message, f.blockMessage))
		}
	}
}

// onTopic reports whether text names any allowed topic.
func (f *Filter) onTopic(text string) bool {
	for _, kws := range f.topics {
		for _, k := range kws {
			if strings.Contains(text, k) {
				return true
			}
		}
	}
	return false
}

// add records m and raises d's action. The first blocking match's message is
// the refusal, so the refusal names the rule the user tripped first.
func (d *Decision) add(m Match, refusal string) {
	d.Matches = append(d.Matches, m)
	if m.Action > d.Action {
		d.Action = m.Action
	}
	if m.Action == Block && d.Message == "" {
		d.Message = refusal
	}
}
