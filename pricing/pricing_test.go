package pricing

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Money
	}{
		{"2.50", 2_500_000_000}, {"0.075", 75_000_000}, {"12", 12 * Unit}, {".5", 500_000_000},
		{"0.000000001", 1}, {" 3.00 ", 3 * Unit}, {"0", 0},
	} {
		got, err := ParseMoney(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1", "1e3", "abc", "1.0000000001", ".", "1.2.3", "99999999999999"} {
		if _, err := ParseMoney(bad); err == nil {
			t.Errorf("ParseMoney(%q) = nil error; want one", bad)
		}
	}
}

func TestMoneyString(t *testing.T) {
	for _, tc := range []struct {
		m    Money
		want string
	}{{0, "0.00"}, {2_500_000_000, "2.50"}, {375_000, "0.000375"}, {1, "0.000000001"}, {-1_500_000_000, "-1.50"}} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("Money(%d).String() = %q; want %q", tc.m, got, tc.want)
		}
	}
	var m Money
	if err := json.Unmarshal([]byte(`0.075`), &m); err != nil || m != 75_000_000 {
		t.Errorf("json 0.075 = %d, %v", m, err)
	}
	if err := json.Unmarshal([]byte(`"1.25"`), &m); err != nil || m != 1_250_000_000 {
		t.Errorf(`json "1.25" = %d, %v`, m, err)
	}
	b, _ := json.Marshal(struct{ C Money }{375_000})
	if string(b) != `{"C":0.000375}` {
		t.Errorf("json.Marshal = %s", b)
	}
}

func TestDefaults(t *testing.T) {
	d := Defaults()
	if len(d) != len(defaultPrices) {
		t.Fatalf("Defaults has %d entries; want %d", len(d), len(defaultPrices))
	}
	for k, p := range d {
		if p.Input <= 0 || p.Output <= 0 || p.CachedInput > p.Input {
			t.Errorf("default %s = %+v: want positive prices, cached at most input", k, p)
		}
		// Anthropic's cache writes are 1.25× input; OpenAI charges none.
		if want := map[bool]Money{true: p.Input * 5 / 4}[strings.HasPrefix(k, "anthropic/")]; p.CacheWrite != want || p.Input*5%4 != 0 {
			t.Errorf("default %s cache write = %v; want %v (exactly 1.25× input for Anthropic, none for OpenAI)", k, p.CacheWrite, want)
		}
	}
}

func TestLookupAndCost(t *testing.T) {
	tab, err := New(Defaults(), map[string]Price{
		"openai/gpt-4o": {Input: 5 * Unit, CachedInput: 1 * Unit, Output: 20 * Unit},
		"llama3":        {Input: Unit / 10, Output: Unit / 10},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		provider, model string
		tokens          Tokens
		want            Money
		priced          bool
	}{
		// Overridden: 200 uncached × $5/M + 800 cached × $1/M + 100 × $20/M = 0.001 + 0.0008 + 0.002.
		{"openai", "gpt-4o", Tokens{Input: 1000, Cached: 800, Output: 100}, 3_800_000, true},
		// A dated id falls back to its family.
		{"openai", "gpt-4o-2024-08-06", Tokens{Input: 1000, Cached: 800, Output: 100}, 3_800_000, true},
		// gpt-4o-mini is its own model, not gpt-4o: 1M × 0.15 + 1M × 0.60.
		{"openai", "gpt-4o-mini", Tokens{Input: 1_000_000, Output: 1_000_000}, 750_000_000, true},
		{"anthropic", "claude-sonnet-4-20250514", Tokens{Input: 10_000, Cached: 5_000, Output: 1_000}, 5000*3000 + 5000*300 + 1000*15000, true},
		{"anthropic", "claude-3-5-haiku-latest", Tokens{Input: 1_000}, 800_000, true},
		// Cache writes at 1.25× input ($3.75/M for Sonnet 4): 2000 read ×
		// 0.30 + 3000 written × 3.75 + 5000 plain × 3.00 + 100 out × 15.
		{"anthropic", "claude-sonnet-4-5", Tokens{Input: 10_000, Cached: 2_000, CacheWrite: 3_000, Output: 100},
			2000*300 + 3000*3750 + 5000*3000 + 100*15000, true},
		// A bare key prices the model on any provider.
		{"ollama", "llama3", Tokens{Input: 10, Output: 10}, 2000, true},
		// Unknown: zero, unpriced.
		{"ollama", "qwen3", Tokens{Input: 10, Output: 10}, 0, false},
		// A provider named otherwise is not guessed to be OpenAI.
		{"work", "gpt-4o", Tokens{Input: 10}, 0, false},
		// Rounding of a fraction of a nano-unit: 1 token at $0.0375/M is 37.5 nano → 38.
		{"x", "half", Tokens{Input: 1}, 0, false},
	} {
		got, ok := tab.Cost(tc.provider, tc.model, tc.tokens)
		if got != tc.want || ok != tc.priced {
			t.Errorf("Cost(%s/%s, %+v) = %d, %v; want %d, %v", tc.provider, tc.model, tc.tokens, got, ok, tc.want, tc.priced)
		}
	}
	if got := (Price{Input: 37_500_000}).Cost(Tokens{Input: 1}); got != 38 {
		t.Errorf("1 token at 0.0375/M = %d nano; want 38 (half up)", got)
	}
	// Huge counts do not overflow: 3e9 tokens at $75/M = $225,000.
	if got := (Price{Output: 75 * Unit}).Cost(Tokens{Output: 3_000_000_000}); got != 225_000*Unit {
		t.Errorf("3e9 tokens at 75/M = %v; want 225000", got)
	}
	// Cached beyond input is capped at input; cached price zero means input price.
	if got := (Price{Input: Unit}).Cost(Tokens{Input: 1_000_000, Cached: 2_000_000}); got != Unit {
		t.Errorf("cached without cached price = %v; want 1.00", got)
	}
	// Writes are capped at the input the reads left; a zero write price
	// is the input price.
	if got := (Price{Input: Unit, CachedInput: Unit / 10, CacheWrite: 2 * Unit}).Cost(Tokens{Input: 1_000_000, Cached: 600_000, CacheWrite: 900_000}); got != Unit/10*6/10+2*Unit*4/10 {
		t.Errorf("writes beyond the input = %v; want 0.06 + 0.80", got)
	}
	if got := (Price{Input: Unit}).Cost(Tokens{Input: 1_000_000, CacheWrite: 1_000_000}); got != Unit {
		t.Errorf("writes without a write price = %v; want 1.00", got)
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := New(Defaults(), nil, "EUR"); err == nil {
		t.Error("New(Defaults, EUR) = nil error; want mixing currencies refused")
	}
	if _, err := New(nil, map[string]Price{"openai/": {}}, ""); err == nil {
		t.Error(`New(models["openai/"]) = nil error`)
	}
	for _, p := range []Price{{Input: -1}, {CachedInput: -1}, {CacheWrite: -1}, {Output: -1}} {
		if _, err := New(nil, map[string]Price{"m": p}, "EUR"); err == nil {
			t.Errorf("New(%+v) = nil error; want a negative price refused", p)
		}
	}
}

// TestSumExact: a million rows of a price with a third decimal sum exactly.
func TestSumExact(t *testing.T) {
	p := Price{Input: 75_000_000} // $0.075/M
	var sum Money
	for range 1_000_000 {
		sum += p.Cost(Tokens{Input: 3})
	}
	if sum != 225_000_000 {
		t.Errorf("sum = %v; want 0.225 exactly", sum)
	}
}
