package pii

import "strings"

// The validators below accept the candidate as written in text: ASCII
// spaces and hyphens between groups are ignored, any other non-digit makes
// the number invalid. They never panic, whatever the input.

// digitsOf returns the digits of s with spaces and hyphens removed, or
// ok=false when s holds any other byte.
func digitsOf(s string) (d []byte, ok bool) {
	d = make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d = append(d, c-'0')
		case c == ' ' || c == '-':
		default:
			return nil, false
		}
	}
	return d, true
}

// ValidLuhn reports whether s (12–19 digits) passes the Luhn mod-10 check
// used by payment card numbers (ISO/IEC 7812-1 Annex B).
func ValidLuhn(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) < 12 || len(d) > 19 {
		return false
	}
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i])
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// ibanLength is the registered IBAN length per country (SWIFT IBAN
// Registry). Countries missing here are checked against the ISO 13616 range
// 15–34 only.
var ibanLength = map[string]int{
	"AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28,
	"CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27,
	"GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27,
	"LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
	"NO": 15, "PL": 28, "PT": 25, "RO": 24, "SA": 24, "SE": 24, "SI": 19,
	"SK": 24, "SM": 27, "TR": 26,
}

// ValidIBAN reports whether s is an IBAN with a correct ISO 7064 mod 97-10
// check (ISO 13616): move the first four characters to the end, replace
// letters by 10–35 and the remainder modulo 97 must be 1. Spaces are
// ignored; letters must be upper case.
func ValidIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	for i := 0; i < 2; i++ {
		if s[i] < 'A' || s[i] > 'Z' || s[i+2] < '0' || s[i+2] > '9' {
			return false
		}
	}
	if n, ok := ibanLength[s[:2]]; ok && n != len(s) {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// twLetter maps the first letter of a Taiwanese ID to its two-digit code
// (Ministry of the Interior; I, O, W, X, Y, Z are out of alphabetical order).
var twLetter = [26]int{
	10, 11, 12, 13, 14, 15, 16, 17, 34, 18, 19, 20, 21,
	22, 35, 23, 24, 25, 26, 27, 28, 29, 32, 30, 31, 33,
}

// ValidTWNationalID reports whether s is a Taiwan national ID number
// (身分證字號) or a new-style (2021) resident certificate number, which use
// the same check: letter code digits weighted 1, 9, then the nine digits
// weighted 8, 7, …, 1, 1; the sum must be divisible by 10. The second
// character is 1 or 2 for citizens, 8 or 9 for residents.
func ValidTWNationalID(s string) bool {
	if len(s) != 10 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	switch s[1] {
	case '1', '2', '8', '9':
	default:
		return false
	}
	code := twLetter[s[0]-'A']
	sum := code/10 + (code%10)*9
	for i := 1; i < 10; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		w := 9 - i
		if w == 0 {
			w = 1
		}
		sum += int(c-'0') * w
	}
	return sum%10 == 0
}

// ValidTWBusinessNumber reports whether s is a Taiwan unified business
// number (統一編號). The Ministry of Finance rule since April 2023: weight the
// eight digits 1,2,1,2,1,2,4,1, add the digits of each product, and the sum
// must be divisible by 5; when the 7th digit is 7 its product 28 counts as
// either 1 or 0. Every number valid under the old divisible-by-10 rule is
// also valid under the new one.
func ValidTWBusinessNumber(s string) bool { return ubnCheck(s, 5) }

// ubnCheck is the unified business number check with the given divisor: 5
// for the current rule, 10 for the rule before April 2023.
func ubnCheck(s string, div int) bool {
	if len(s) != 8 {
		return false
	}
	weights := [8]int{1, 2, 1, 2, 1, 2, 4, 1}
	sum := 0
	for i := 0; i < 8; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		p := int(c-'0') * weights[i]
		sum += p/10 + p%10
	}
	// 7×4 = 28 → 2+8 = 10 above; 10 may be read as 1+0 = 1 or as 0.
	return sum%div == 0 || (s[6] == '7' && (sum+1)%div == 0)
}

// ValidJPMyNumber reports whether s is a Japanese individual number (個人番号,
// My Number) with a correct check digit (総務省令第85号 第5条): with P(n) the
// n-th of the first eleven digits counted from the right and Q(n) = n+1 for
// n ≤ 6, n−5 for n ≥ 7, r = Σ P(n)Q(n) mod 11; the check digit is 0 when
// r ≤ 1, otherwise 11−r.
func ValidJPMyNumber(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 12 {
		return false
	}
	sum := 0
	for n := 1; n <= 11; n++ {
		q := n + 1
		if n >= 7 {
			q = n - 5
		}
		sum += int(d[11-n]) * q
	}
	check := 0
	if r := sum % 11; r > 1 {
		check = 11 - r
	}
	return int(d[11]) == check
}

// ValidJPCorporateNumber reports whether s is a Japanese corporate number
// (法人番号, National Tax Agency): the leading check digit equals
// 9 − (Σ P(n)Q(n) mod 9), with P(n) the n-th of the other twelve digits
// from the right and Q(n) = 1 for odd n, 2 for even n.
func ValidJPCorporateNumber(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 13 {
		return false
	}
	sum := 0
	for n := 1; n <= 12; n++ {
		q := 1
		if n%2 == 0 {
			q = 2
		}
		sum += int(d[13-n]) * q
	}
	return int(d[0]) == 9-sum%9
}

// ValidKRRRN reports whether s (YYMMDD-GNNNNNC) is a Korean resident
// registration number with a correct check digit: weights 2,3,4,5,6,7,8,9,
// 2,3,4,5 on the first twelve digits, C = (11 − sum mod 11) mod 10.
//
// Numbers issued since October 2020 have random trailing digits and no
// check digit, so false does not mean the number is not an RRN; the
// [Scanner] keeps such matches at a lower score instead of dropping them.
func ValidKRRRN(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 13 {
		return false
	}
	weights := [12]int{2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5}
	sum := 0
	for i, w := range weights {
		sum += int(d[i]) * w
	}
	return int(d[12]) == (11-sum%11)%10
}

// ValidKRBusinessNumber reports whether s (NNN-NN-NNNNN) is a Korean business
// registration number (사업자등록번호) with a correct check digit: weights
// 1,3,7,1,3,7,1,3,5 on the first nine digits, plus ⌊d9×5/10⌋; the check
// digit is (10 − sum mod 10) mod 10.
func ValidKRBusinessNumber(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 10 {
		return false
	}
	weights := [9]int{1, 3, 7, 1, 3, 7, 1, 3, 5}
	sum := 0
	for i, w := range weights {
		sum += int(d[i]) * w
	}
	sum += int(d[8]) * 5 / 10
	return int(d[9]) == (10-sum%10)%10
}

// ValidUKNHSNumber reports whether s is an NHS number with a correct mod-11
// check digit (NHS Data Dictionary): weights 10 down to 2 on the first nine
// digits, check = 11 − sum mod 11, where 11 means 0 and 10 means the number
// is invalid.
func ValidUKNHSNumber(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 10 {
		return false
	}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(d[i]) * (10 - i)
	}
	check := 11 - sum%11
	if check == 11 {
		check = 0
	}
	return check != 10 && int(d[9]) == check
}

// ValidABARouting reports whether s is a US bank routing transit number
// (ABA RTN): weights 3,7,1 repeated over the nine digits, the sum must be
// divisible by 10.
func ValidABARouting(s string) bool {
	d, ok := digitsOf(s)
	if !ok || len(d) != 9 {
		return false
	}
	sum := 0
	for i, v := range d {
		sum += int(v) * [3]int{3, 7, 1}[i%3]
	}
	return sum%10 == 0
}
