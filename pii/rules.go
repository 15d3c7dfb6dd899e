package pii

import (
	"net/netip"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// rule is one detector for one kind of value in one locale.
//
// Digit rules (re != nil) are tried only at candidate starts near ASCII
// digits: after a non-alphanumeric byte, on a byte that can begin the
// pattern (first), where the run of number-like bytes holds at least
// minDigits digits, and where pre (if set) accepts the text. re is anchored
// and ends with a boundary group; submatch 1 is the value. check, when set,
// returns how many bytes of the match to keep (0 rejects it) and the base
// score; otherwise the base score is score.
//
// Other rules (find != nil) locate their own candidates from a cheap byte
// trigger ('@', "://", ':').
type rule struct {
	locale, name, typ string
	re                *regexp.Regexp
	first             [256]bool
	minDigits         int
	pre               func(s string) bool
	score             float64
	check             func(m string) (keep int, score float64)
	find              func(text string, yield func(start, end int, score float64))
	context           []string // lower case; ASCII matched case-insensitively
}

func (r *rule) id() string { return r.locale + "." + r.name }

// digitRule compiles core, anchored and followed by an ASCII alphanumeric
// boundary. Compiled once, at package initialisation.
func digitRule(locale, name, typ, core string, minDigits int, score float64, check func(string) (int, float64), context ...string) *rule {
	return &rule{
		locale: locale, name: name, typ: typ,
		re:        regexp.MustCompile(`^(` + core + `)(?:[^0-9A-Za-z]|$)`),
		first:     firstBytes(core),
		minDigits: minDigits, score: score, check: check, context: context,
	}
}

// firstBytes returns the bytes a match of pattern can start with, so that
// a rule is not even tried elsewhere.
func firstBytes(pattern string) [256]bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		panic(err)
	}
	set, _ := first(re.Simplify())
	return set
}

// first returns the possible first bytes of re and whether re matches the
// empty string. Anything it does not understand allows every byte.
func first(re *syntax.Regexp) (set [256]bool, nullable bool) {
	all := func() (s [256]bool) {
		for i := range s {
			s[i] = true
		}
		return s
	}
	markRange := func(s *[256]bool, lo, hi rune) {
		for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
			s[r] = true
		}
		if hi >= utf8.RuneSelf {
			for b := 0xC2; b <= 0xF4; b++ {
				s[b] = true
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return set, true
		}
		r := re.Rune[0]
		if r >= utf8.RuneSelf {
			var buf [utf8.UTFMax]byte
			utf8.EncodeRune(buf[:], r)
			set[buf[0]] = true
			return set, false
		}
		set[r] = true
		if re.Flags&syntax.FoldCase != 0 {
			set[unicode.ToLower(r)], set[unicode.ToUpper(r)] = true, true
		}
		return set, false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			markRange(&set, re.Rune[i], re.Rune[i+1])
		}
		return set, false
	case syntax.OpCapture, syntax.OpPlus:
		return first(re.Sub[0])
	case syntax.OpQuest, syntax.OpStar:
		set, _ = first(re.Sub[0])
		return set, true
	case syntax.OpRepeat:
		set, nullable = first(re.Sub[0])
		return set, nullable || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s, n := first(sub)
			for i, ok := range s {
				set[i] = set[i] || ok
			}
			if !n {
				return set, false
			}
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, n := first(sub)
			for i, ok := range s {
				set[i] = set[i] || ok
			}
			nullable = nullable || n
		}
		return set, nullable
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpBeginText, syntax.OpEndLine, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return set, true
	}
	return all(), true
}

func withPre(r *rule, pre func(string) bool) *rule {
	r.pre = pre
	return r
}

// always turns a boolean validator into a check with a fixed score.
func always(valid func(string) bool, score float64) func(string) (int, float64) {
	return func(m string) (int, float64) {
		if valid(m) {
			return len(m), score
		}
		return 0, 0
	}
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// Context words shared by several rules.
var (
	ctxPhone    = []string{"phone", "tel", "mobile", "cell", "call", "fax", "電話", "携帯", "手機", "聯絡", "連絡", "전화", "휴대폰", "핸드폰", "연락처"}
	ctxPhoneEN  = []string{"phone", "tel", "mobile", "cell", "call", "fax"}
	ctxPhoneTW  = join(ctxPhoneEN, []string{"電話", "手機", "聯絡", "行動"})
	ctxPhoneJP  = join(ctxPhoneEN, []string{"電話", "携帯", "連絡先", "ＴＥＬ"})
	ctxPhoneKR  = join(ctxPhoneEN, []string{"전화", "휴대폰", "핸드폰", "연락처"})
	ctxPassport = []string{"passport"}
	ctxPostal   = []string{"address", "postal", "post code", "postcode", "zip"}
)

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// allRules is every rule, in tie-break order: when two overlapping matches
// have the same score and length the earlier rule wins.
var allRules = []*rule{
	// Global.
	{locale: "Global", name: "Email", typ: "EMAIL", score: 0.9, find: findEmail,
		context: []string{"email", "e-mail", "mail", "メール", "郵件", "信箱", "이메일"}},
	{locale: "Global", name: "URLCredentials", typ: "CREDENTIAL", score: 0.95, find: findURLCredentials},
	{locale: "Global", name: "IPv6", typ: "IP_ADDRESS", find: findIPv6, context: []string{"ip", "ipv6", "address", "アドレス", "位址", "주소"}},
	digitRule("Global", "CreditCard", "CREDIT_CARD",
		`[0-9]{4}(?:[ \-]?[0-9]{4}){3}|[0-9]{4}[ \-]?[0-9]{6}[ \-]?[0-9]{5}|[0-9]{13,19}`, 13, 0.85,
		func(m string) (int, float64) {
			if m[0] < '2' || m[0] > '6' || !ValidLuhn(m) {
				return 0, 0
			}
			return len(m), 0.85
		}, "card", "visa", "mastercard", "amex", "credit", "カード", "信用卡", "卡號", "카드"),
	digitRule("Global", "IBAN", "IBAN",
		`[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?|[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}`, 4, 0.95,
		checkIBAN, "iban", "bank", "account", "口座", "帳戶", "계좌"),
	digitRule("Global", "Phone", "PHONE", `\+[1-9](?:[ \-.]?\(?[0-9]\)?){7,14}`, 8, 0.75,
		func(m string) (int, float64) {
			if n := countDigits(m); n < 8 || n > 15 {
				return 0, 0
			}
			return len(m), 0.75
		}, ctxPhone...),
	digitRule("Global", "IPv4", "IP_ADDRESS", `[0-9]{1,3}(?:\.[0-9]{1,3}){3}`, 4, 0.6,
		func(m string) (int, float64) {
			a, err := netip.ParseAddr(m)
			if err != nil || !a.Is4() {
				return 0, 0
			}
			return len(m), 0.6
		}, "ip", "ipv4", "address", "host", "server", "アドレス", "位址", "주소"),
	withPre(digitRule("Global", "MACAddress", "MAC_ADDRESS", `[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}`, 0, 0.6, nil,
		"mac", "device", "ethernet", "wifi", "wi-fi"),
		// Hex letters start many words; only try where a separator follows.
		func(s string) bool { return len(s) >= 17 && (s[2] == ':' || s[2] == '-') }),

	// Taiwan.
	digitRule("TW", "NationalID", "NATIONAL_ID", `[A-Z][12][0-9]{8}`, 9, 0.9, always(ValidTWNationalID, 0.9),
		"身分證", "身份證", "身分證字號", "統一證號", "national id", "id no", "id number"),
	digitRule("TW", "ResidentCertificate", "NATIONAL_ID", `[A-Z][89][0-9]{8}`, 9, 0.8, always(ValidTWNationalID, 0.8),
		"居留證", "統一證號", "arc", "resident"),
	digitRule("TW", "BusinessNumber", "BUSINESS_ID", `[0-9]{8}`, 8, 0.3, always(ValidTWBusinessNumber, 0.3),
		"統一編號", "統編", "營利事業", "ubn", "business number", "tax id", "vat"),
	digitRule("TW", "Phone", "PHONE", `09[0-9]{2}[\- ]?[0-9]{3}[\- ]?[0-9]{3}`, 10, 0.7, nil, ctxPhoneTW...),
	digitRule("TW", "Landline", "PHONE", `\(?0[2-8]\)?[\- ]?[0-9]{3,4}[\- ]?[0-9]{4}`, 9, 0.5, nil, ctxPhoneTW...),
	digitRule("TW", "Passport", "PASSPORT", `[0-9]{9}`, 9, 0.2, nil, "護照", "passport"),

	// Japan.
	digitRule("JP", "MyNumber", "NATIONAL_ID", `[0-9]{4}[\- ]?[0-9]{4}[\- ]?[0-9]{4}`, 12, 0.55, always(ValidJPMyNumber, 0.55),
		"マイナンバー", "個人番号", "my number", "mynumber"),
	digitRule("JP", "CorporateNumber", "BUSINESS_ID", `[1-9][0-9]{12}`, 13, 0.5, always(ValidJPCorporateNumber, 0.5),
		"法人番号", "corporate number"),
	digitRule("JP", "Phone", "PHONE", `0[789]0[\- ]?[0-9]{4}[\- ]?[0-9]{4}`, 11, 0.7, nil, ctxPhoneJP...),
	digitRule("JP", "Landline", "PHONE", `0[1-9][0-9]{0,3}[\-(][0-9]{1,4}[\-)][0-9]{4}`, 10, 0.55,
		func(m string) (int, float64) {
			if countDigits(m) != 10 {
				return 0, 0
			}
			return len(m), 0.55
		}, ctxPhoneJP...),
	digitRule("JP", "PostalCode", "POSTAL_CODE", `〒 ?[0-9]{3}-?[0-9]{4}|[0-9]{3}-[0-9]{4}`, 7, 0.3,
		func(m string) (int, float64) {
			if strings.HasPrefix(m, "〒") {
				return len(m), 0.9
			}
			return len(m), 0.3
		}, join(ctxPostal, []string{"郵便番号", "住所", "〒"})...),
	digitRule("JP", "Passport", "PASSPORT", `[A-Z]{2}[0-9]{7}`, 7, 0.3, nil, "旅券", "パスポート", "passport"),

	// Korea.
	digitRule("KR", "RRN", "NATIONAL_ID",
		`[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])-?[1-8][0-9]{6}`, 13, 0.95,
		func(m string) (int, float64) {
			switch {
			case ValidKRRRN(m):
				return len(m), 0.95
			case strings.Contains(m, "-"):
				// Issued after October 2020: no check digit.
				return len(m), 0.6
			default:
				return len(m), 0.4
			}
		}, "주민등록번호", "주민번호", "외국인등록번호", "rrn", "resident registration"),
	digitRule("KR", "Phone", "PHONE", `01[016789][\- ]?[0-9]{3,4}[\- ]?[0-9]{4}`, 10, 0.7, nil, ctxPhoneKR...),
	digitRule("KR", "Landline", "PHONE", `0(?:2|[3-6][1-5])-[0-9]{3,4}-[0-9]{4}`, 9, 0.5, nil, ctxPhoneKR...),
	digitRule("KR", "BusinessNumber", "BUSINESS_ID", `[0-9]{3}-[0-9]{2}-[0-9]{5}`, 10, 0.6, always(ValidKRBusinessNumber, 0.6),
		"사업자등록번호", "사업자번호", "business registration"),
	digitRule("KR", "Passport", "PASSPORT", `[MSROD][0-9]{8}|M[0-9]{3}[A-Z][0-9]{4}`, 7, 0.3, nil, "여권", "passport"),

	// United States.
	digitRule("US", "SSN", "NATIONAL_ID", `[0-9]{3}-[0-9]{2}-[0-9]{4}|[0-9]{9}`, 9, 0.8, checkSSN,
		"ssn", "social security", "社会保障番号"),
	digitRule("US", "ITIN", "TAX_ID",
		`9[0-9]{2}-?(?:5[0-9]|6[0-5]|7[0-9]|8[0-8]|9[0-2]|9[4-9])-?[0-9]{4}`, 9, 0.85,
		func(m string) (int, float64) {
			if strings.Contains(m, "-") {
				return len(m), 0.85
			}
			return len(m), 0.35
		}, "itin", "taxpayer", "tax id"),
	digitRule("US", "Phone", "PHONE", `(?:\+?1[ .\-]?)?\(?[2-9][0-9]{2}\)?[ .\-]?[2-9][0-9]{2}[ .\-][0-9]{4}`, 10, 0.6, nil, ctxPhoneEN...),
	digitRule("US", "Passport", "PASSPORT", `[A-Z]?[0-9]{8,9}`, 8, 0.25, nil, ctxPassport...),
	digitRule("US", "ZIPCode", "POSTAL_CODE", `[0-9]{5}(?:-[0-9]{4})?`, 5, 0.2, nil, "zip", "zip code", "zipcode"),
	digitRule("US", "BankRouting", "BANK_ACCOUNT", `[0-9]{9}`, 9, 0.3, always(ValidABARouting, 0.3),
		"routing", "aba", "rtn", "transit number"),

	// United Kingdom.
	digitRule("UK", "NHSNumber", "HEALTH_ID", `[0-9]{3}[ \-]?[0-9]{3}[ \-]?[0-9]{4}`, 10, 0.65, always(ValidUKNHSNumber, 0.65),
		"nhs", "health"),
	digitRule("UK", "NINO", "NATIONAL_ID",
		`[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPRSTW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]`, 6, 0.8,
		func(m string) (int, float64) {
			switch m[:2] {
			case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
				return 0, 0
			}
			return len(m), 0.8
		}, "national insurance", "nino", "ni number", "ni no"),
	digitRule("UK", "Postcode", "POSTAL_CODE", `[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][ABD-HJLNP-UW-Z]{2}`, 2, 0.55,
		func(m string) (int, float64) {
			if strings.Contains(m, " ") {
				return len(m), 0.55
			}
			return len(m), 0.35
		}, ctxPostal...),
	digitRule("UK", "Phone", "PHONE", `(?:\+44 ?|0)(?:7[0-9]{3} ?[0-9]{6}|[1-9][0-9]{1,3} ?[0-9]{3,4} ?[0-9]{3,4})`, 10, 0.55,
		func(m string) (int, float64) {
			n := countDigits(m)
			if strings.HasPrefix(m, "+44") {
				n-- // the 44 replaces the leading 0
			}
			if n != 11 {
				return 0, 0
			}
			return len(m), 0.55
		}, ctxPhoneEN...),
	digitRule("UK", "SortCode", "BANK_ACCOUNT", `[0-9]{2}-[0-9]{2}-[0-9]{2}`, 6, 0.3, nil, "sort code", "sortcode", "bank"),
}

func checkIBAN(m string) (int, float64) {
	// A spaced IBAN may have swallowed a following 4-character word; drop
	// trailing groups until the checksum holds.
	for {
		if ValidIBAN(m) {
			return len(m), 0.95
		}
		i := strings.LastIndexByte(m, ' ')
		if i < 0 {
			return 0, 0
		}
		m = m[:i]
	}
}

func checkSSN(m string) (int, float64) {
	d, _ := digitsOf(m)
	area := int(d[0])*100 + int(d[1])*10 + int(d[2])
	group := int(d[3])*10 + int(d[4])
	serial := int(d[5])*1000 + int(d[6])*100 + int(d[7])*10 + int(d[8])
	// SSA never issues area 000, 666 or 900–999, group 00 or serial 0000;
	// 078-05-1120 is the famous wallet-card specimen.
	if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 || (area == 78 && group == 5 && serial == 1120) {
		return 0, 0
	}
	if strings.Contains(m, "-") {
		return len(m), 0.8
	}
	return len(m), 0.3
}

// Byte classes used by the trigger-based finders.
func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isEmailLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomain(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }

var emailRE = regexp.MustCompile(`^[A-Za-z0-9._%+\-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}`)

// findEmail looks only around '@' bytes, so text without one costs a
// single IndexByte pass.
func findEmail(text string, yield func(start, end int, score float64)) {
	for off := 0; ; {
		i := strings.IndexByte(text[off:], '@')
		if i < 0 {
			return
		}
		at := off + i
		off = at + 1
		start := at
		for start > 0 && at-start < 64 && isEmailLocal(text[start-1]) {
			start--
		}
		if start > 0 && isEmailLocal(text[start-1]) {
			continue // local part longer than RFC 5321 allows
		}
		end := at + 1
		for end < len(text) && end-at <= 255 && isDomain(text[end]) {
			end++
		}
		loc := emailRE.FindStringIndex(text[start:end])
		if loc == nil {
			continue
		}
		e := start + loc[1]
		if e < len(text) && isAlnum(text[e]) {
			continue
		}
		yield(start, e, 0.9)
		off = e
	}
}

var urlCredRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]+:[^\s/?#@]+@[^\s/?#@]+`)

// findURLCredentials finds scheme://user:password@host around each "://".
func findURLCredentials(text string, yield func(start, end int, score float64)) {
	for off := 0; ; {
		i := strings.Index(text[off:], "://")
		if i < 0 {
			return
		}
		sep := off + i
		off = sep + 3
		start := sep
		for start > 0 && sep-start < 32 && (isAlnum(text[start-1]) || text[start-1] == '+' || text[start-1] == '.' || text[start-1] == '-') {
			start--
		}
		end := sep + 3
		for end < len(text) && end-sep < 2048 && text[end] > ' ' && text[end] != '/' {
			end++
		}
		loc := urlCredRE.FindStringIndex(text[start:end])
		if loc == nil {
			continue
		}
		yield(start, start+loc[1], 0.95)
		off = start + loc[1]
	}
}

// findIPv6 expands each ':' to the surrounding run of hex digits, colons and
// dots and lets netip decide. Runs glued to other letters ("std::vector")
// and short compressed forms ("a::b") are rejected or scored low.
func findIPv6(text string, yield func(start, end int, score float64)) {
	for off := 0; ; {
		i := strings.IndexByte(text[off:], ':')
		if i < 0 {
			return
		}
		start, end := off+i, off+i+1
		for start > 0 && (isHex(text[start-1]) || text[start-1] == ':' || text[start-1] == '.') {
			start--
		}
		for end < len(text) && (isHex(text[end]) || text[end] == ':' || text[end] == '.') {
			end++
		}
		off = end
		for end > start && text[end-1] == '.' {
			end-- // sentence full stop
		}
		if (start > 0 && isAlnum(text[start-1])) || (end < len(text) && isAlnum(text[end])) {
			continue
		}
		run := text[start:end]
		if strings.Count(run, ":") < 2 {
			continue
		}
		a, err := netip.ParseAddr(run)
		if err != nil || !a.Is6() {
			continue
		}
		groups := 0
		for _, g := range strings.Split(run, ":") {
			if g != "" {
				groups++
			}
		}
		score := 0.8
		if groups < 3 {
			score = 0.45 // "fe80::1" or a namespace-like "ab::cd": needs context
		}
		yield(start, end, score)
	}
}
