package pricing

import (
	"fmt"
	"strconv"
	"strings"
)

// Money is an amount of the configured currency in nano-units (10⁻⁹ of a
// dollar, say). It is an integer so that sums of many usage rows are exact:
// a float accumulates rounding errors that show up as a cent lost in a
// monthly bill. int64 holds about 9.2 billion currency units.
type Money int64

// Nano is the smallest Money; Unit is one unit of the currency (one dollar).
const (
	Nano Money = 1
	Unit Money = 1_000_000_000
)

// ParseMoney reads a decimal amount such as "2.50", "0.075" or "12" into
// Money exactly (no float on the way), with at most nine decimals. A
// negative amount, an exponent or text that is not a number is an error.
func ParseMoney(s string) (Money, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("amount is empty; write a decimal number such as 2.50")
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("amount %q is negative; prices and budgets are zero or more", s)
	}
	t = strings.TrimPrefix(t, "+")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("amount %q is not a decimal number such as 2.50", s)
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("amount %q has more than 9 decimals", s)
	}
	if !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("amount %q is not a decimal number such as 2.50", s)
	}
	var w int64
	if whole != "" {
		var err error
		w, err = strconv.ParseInt(whole, 10, 64)
		if err != nil || w > int64(maxMoney/Unit) {
			return 0, fmt.Errorf("amount %q is too large", s)
		}
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	return Money(w)*Unit + Money(f), nil
}

const maxMoney = Money(1<<63 - 1)

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String formats m as a decimal with the trailing zeros of its fraction
// dropped but at least two decimals: "2.50", "0.000375", "12.00".
func (m Money) String() string {
	neg := m < 0
	v := int64(m)
	if neg {
		v = -v
	}
	whole, frac := v/int64(Unit), v%int64(Unit)
	fs := strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	for len(fs) < 2 {
		fs += "0"
	}
	s := strconv.FormatInt(whole, 10) + "." + fs
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes m as a JSON number with its exact decimals (0.000375),
// so that clients read currency units rather than nano-units.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a JSON number or a string holding one, exactly.
func (m *Money) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		uq, err := strconv.Unquote(s)
		if err != nil {
			return fmt.Errorf("amount %s is not a decimal number such as 2.50", s)
		}
		s = uq
	}
	v, err := ParseMoney(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// UnmarshalText reads a decimal amount (YAML scalars and environment
// overrides go through it), exactly: the YAML 2.50 is read as the text
// "2.50", never as a float.
func (m *Money) UnmarshalText(b []byte) error {
	v, err := ParseMoney(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
