package config

import (
	"regexp"
	"time"

	"github.com/agentcraftlab/agentcraft/pricing"
)

// Pricing prices model usage: the cost of every usage row and the money
// budgets count.
//
//	pricing:
//	  currency: USD
//	  models:
//	    openai/gpt-4o: {input: 2.50, cached_input: 1.25, output: 10.00}
//	    work-claude/claude-sonnet-4-5: {input: 3, cached_input: 0.30, cache_write: 3.75, output: 15}
//	    llama3: {input: 0, output: 0}   # any provider
type Pricing struct {
	// Defaults keeps the built-in prices of common OpenAI and Anthropic
	// models (USD per million tokens; see package pricing). Default true;
	// false prices only Models (needed for a currency other than USD).
	Defaults *bool `yaml:"defaults"`
	// Currency names the unit of every price and cost. Default USD.
	Currency string `yaml:"currency"`
	// Models override and extend the prices, per million tokens, keyed
	// "provider/model" (the provider's name in agentcraft.yaml) or a bare
	// model for any provider. A dated model id (gpt-4o-2024-08-06) uses
	// its family's price.
	Models map[string]pricing.Price `yaml:"models"`
}

// Table builds the price table the configuration describes.
func (p Pricing) Table() (*pricing.Table, error) {
	var base map[string]pricing.Price
	if p.Defaults == nil || *p.Defaults {
		base = pricing.Defaults()
	}
	return pricing.New(base, p.Models, p.Currency)
}

// Budget is the default monthly budget of every workspace whose budget
// was not set through PUT /api/budget.
//
//	budget:
//	  monthly_tokens: 50000000
//	  monthly_cost: 200.00
type Budget struct {
	// MonthlyTokens limits input + output tokens per UTC month; 0 none.
	MonthlyTokens int64 `yaml:"monthly_tokens"`
	// MonthlyCost limits the month's cost in pricing.currency; 0 none.
	MonthlyCost pricing.Money `yaml:"monthly_cost"`
	// CacheTTL is how long a workspace's spending is read from this
	// process's count before the database is read again (what other
	// processes spent shows within it). Default 5s.
	CacheTTL time.Duration `yaml:"cache_ttl"`
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// validateCosts checks pricing and budget.
func (c *Config) validateCosts(bad func(path, format string, args ...any)) {
	if cur := c.Pricing.Currency; cur != "" && !currencyCode.MatchString(cur) {
		bad("pricing.currency", "%q is not a three-letter currency code such as USD or EUR", cur)
	} else if _, err := c.Pricing.Table(); err != nil {
		bad("pricing", "%v", err)
	}
	if c.Budget.MonthlyTokens < 0 {
		bad("budget.monthly_tokens", "%d is negative: give 0 (no limit) or a number of tokens", c.Budget.MonthlyTokens)
	}
	if c.Budget.CacheTTL < 0 {
		bad("budget.cache_ttl", "%v is negative: give a duration such as 5s", c.Budget.CacheTTL)
	}
	if c.Budget.CacheTTL > time.Hour {
		bad("budget.cache_ttl", "%v is over an hour: budgets would see other processes' spending that late; use seconds", c.Budget.CacheTTL)
	}
}
