package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/pricing"
)

func TestPricingAndBudget(t *testing.T) {
	cfg, err := Load(write(t, `
pricing:
  currency: USD
  models:
    openai/gpt-4o: {input: 2.00, cached_input: 0.5, output: 8}
    llama3: {input: 0.075, output: 0.30}
    work-claude/claude-sonnet-4-5: {input: 3, cached_input: 0.30, cache_write: 3.75, output: 15}
budget:
  monthly_tokens: 1000000
  monthly_cost: 25.50
  cache_ttl: 2s
`), []string{"AGENTCRAFT_BUDGET_MONTHLY_COST=12.345"})
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	if cfg.Budget.MonthlyTokens != 1_000_000 || cfg.Budget.MonthlyCost != 12_345_000_000 || cfg.Budget.CacheTTL != 2*time.Second {
		t.Errorf("budget = %+v; want 1M tokens, 12.345 from the environment, 2s", cfg.Budget)
	}
	tab, err := cfg.Pricing.Table()
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tab.Lookup("openai", "gpt-4o-2024-11-20"); !ok || p != (pricing.Price{Input: 2 * pricing.Unit, CachedInput: pricing.Unit / 2, Output: 8 * pricing.Unit}) {
		t.Errorf("gpt-4o price = %+v, %v; want the override", p, ok)
	}
	if p, ok := tab.Lookup("ollama", "llama3"); !ok || p.Input != 75_000_000 {
		t.Errorf("llama3 price = %+v, %v; want 0.075 exactly", p, ok)
	}
	if _, ok := tab.Lookup("anthropic", "claude-sonnet-4-5"); !ok {
		t.Error("defaults dropped: claude-sonnet-4-5 unpriced")
	}
	if p, _ := tab.Lookup("work-claude", "claude-sonnet-4-5"); p.CacheWrite != 3_750_000_000 {
		t.Errorf("work-claude's cache write = %v; want 3.75", p.CacheWrite)
	}

	for _, tc := range []struct{ body, want string }{
		{"pricing: {models: {openai/gpt-4o: {inptu: 1}}}", `pricing.models.openai/gpt-4o.inptu: unknown key`},
		{"pricing: {currency: euro}", "pricing.currency"},
		{"pricing: {currency: EUR}", "pricing.defaults: false"},
		{"pricing: {models: {x: {input: -1}}}", "negative"},
		{"pricing: {models: {x: {input: 1e-6}}}", "not a decimal number"},
		{"budget: {monthly_tokens: -5}", "budget.monthly_tokens"},
		{"budget: {monthly_cost: abc}", "not a decimal number"},
		{"budget: {cache_ttl: 2h}", "budget.cache_ttl"},
		{"budgets: {}", "budgets: unknown key"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v; want it to say %q", tc.body, err, tc.want)
		}
	}
	// Another currency is possible without the USD defaults.
	cfg, err = Load(write(t, "pricing: {defaults: false, currency: EUR, models: {openai/gpt-4o: {input: 2, output: 9}}}"), []string{})
	if err != nil {
		t.Fatalf("Load(EUR) = %v", err)
	}
	if tab, _ := cfg.Pricing.Table(); tab.Currency() != "EUR" {
		t.Errorf("currency = %s; want EUR", tab.Currency())
	}
}
