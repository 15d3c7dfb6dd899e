package pii

import (
	"strings"
	"testing"
)

func newScanner(t testing.TB, opts *Options) *Scanner {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// find returns the entity of rule in ents, if any.
func find(ents []Entity, rule string) (Entity, bool) {
	for _, e := range ents {
		if e.Rule == rule {
			return e, true
		}
	}
	return Entity{}, false
}

// TestScanRules checks every rule on mixed English, Japanese, Chinese and
// Korean text: the rule must win and cover exactly the value.
func TestScanRules(t *testing.T) {
	tests := []struct {
		rule, text, value string
	}{
		{"Global.Email", "連絡先はtaro.yamada@example.co.jpです。", "taro.yamada@example.co.jp"},
		{"Global.URLCredentials", "DB: postgres://admin:s3cret@db.internal:5432/app を使う", "postgres://admin:s3cret@db.internal:5432"},
		{"Global.IPv6", "サーバーのIPv6は2001:db8::8a2e:370:7334です", "2001:db8::8a2e:370:7334"},
		{"Global.CreditCard", "card 4111 1111 1111 1111 expires 12/29", "4111 1111 1111 1111"},
		{"Global.IBAN", "IBAN: GB82 WEST 1234 5698 7654 32 を振込先に", "GB82 WEST 1234 5698 7654 32"},
		{"Global.Phone", "please call +81 90-1234-5678 today", "+81 90-1234-5678"},
		{"Global.IPv4", "host 192.168.10.20 に接続", "192.168.10.20"},
		{"Global.MACAddress", "MAC 00:1A:2B:3C:4D:5E の端末", "00:1A:2B:3C:4D:5E"},

		{"TW.NationalID", "身分證字號A123456789，請保密", "A123456789"},
		{"TW.ResidentCertificate", "居留證號碼A800000014。", "A800000014"},
		{"TW.BusinessNumber", "統一編號：04595257", "04595257"},
		{"TW.Phone", "手機0912-345-678找我", "0912-345-678"},
		{"TW.Landline", "電話 (02)2345-6789", "(02)2345-6789"},
		{"TW.Passport", "護照號碼 312345678", "312345678"},

		{"JP.MyNumber", "マイナンバーは1234 5678 9018です", "1234 5678 9018"},
		{"JP.CorporateNumber", "法人番号 7000012050002", "7000012050002"},
		{"JP.Phone", "携帯：090-1234-5678まで", "090-1234-5678"},
		{"JP.Landline", "TEL 03-1234-5678", "03-1234-5678"},
		{"JP.PostalCode", "〒100-0001 東京都千代田区", "〒100-0001"},
		{"JP.Passport", "旅券番号 TK1234567", "TK1234567"},

		{"KR.RRN", "주민등록번호 900101-1234568 입니다", "900101-1234568"},
		{"KR.Phone", "전화 010-1234-5678", "010-1234-5678"},
		{"KR.Landline", "연락처 031-123-4567", "031-123-4567"},
		{"KR.BusinessNumber", "사업자등록번호 123-45-67891", "123-45-67891"},
		{"KR.Passport", "여권번호 M12345678", "M12345678"},

		{"US.SSN", "My SSN is 123-45-6789.", "123-45-6789"},
		{"US.ITIN", "ITIN 912-70-1234 on file", "912-70-1234"},
		{"US.Phone", "phone (212) 555-0123 ext", "(212) 555-0123"},
		{"US.Passport", "passport no. 123456789", "123456789"},
		{"US.ZIPCode", "ZIP code 94105", "94105"},
		{"US.BankRouting", "routing number 021000021", "021000021"},

		{"UK.NHSNumber", "NHS number 943 476 5919", "943 476 5919"},
		{"UK.NINO", "NI number: AB 12 34 56 C", "AB 12 34 56 C"},
		{"UK.Postcode", "10 Downing Street, London SW1A 2AA", "SW1A 2AA"},
		{"UK.Phone", "tel 020 7946 0958", "020 7946 0958"},
		{"UK.SortCode", "sort code 12-34-56", "12-34-56"},
	}
	s := newScanner(t, nil)
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.rule] = true
		t.Run(tt.rule, func(t *testing.T) {
			ents := s.Scan(tt.text)
			e, ok := find(ents, tt.rule)
			if !ok {
				t.Fatalf("Scan(%q) = %+v, want a %s entity", tt.text, ents, tt.rule)
			}
			if got := tt.text[e.Start:e.End]; got != tt.value {
				t.Errorf("%s matched %q, want %q", tt.rule, got, tt.value)
			}
		})
	}
	for _, r := range s.Rules() {
		if !seen[r.Rule] {
			t.Errorf("rule %s has no detection test", r.Rule)
		}
	}
}

func TestRuleCount(t *testing.T) {
	per := map[string]int{}
	for _, r := range newScanner(t, nil).Rules() {
		per[r.Locale]++
	}
	total := 0
	for _, l := range Locales {
		if per[l] < 5 {
			t.Errorf("locale %s has %d rules, want at least 5", l, per[l])
		}
		total += per[l]
	}
	if total < 35 {
		t.Errorf("%d rules, want at least 35", total)
	}
}

// Numbers with a wrong check digit, or in the wrong shape, are not reported.
func TestScanRejects(t *testing.T) {
	// rule, when set, is the only rule that must not match: the text may
	// legitimately match another (a bad NHS number is still a US phone shape).
	tests := []struct{ name, text, rule string }{
		{"card failing Luhn", "card 4111 1111 1111 1112", ""},
		{"iban wrong check", "IBAN GB82 WEST 1234 5698 7654 33", ""},
		{"tw id wrong check", "身分證 A123456788", ""},
		{"my number wrong check", "マイナンバー 1234 5678 9010", ""},
		{"nhs wrong check", "NHS 943 476 5918", "UK.NHSNumber"},
		{"ssn area 666", "SSN 666-12-3456", ""},
		{"ssn specimen", "SSN 078-05-1120", ""},
		{"ipv4 octet out of range", "ip 192.168.1.300", ""},
		{"digits inside a word", "order ABC4111111111111111XYZ", ""},
		{"cpp namespace", "use std::vector and a::b", ""},
		{"version number", "upgrade to v1.2.3.4", ""},
		{"plain year and count", "In 2024 we shipped 12 releases", ""},
		{"email without domain dot", "mail me at root@localhost", ""},
		{"nino bad prefix", "NI number GB 12 34 56 C", ""},
	}
	s := newScanner(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range s.Scan(tt.text) {
				if tt.rule == "" || e.Rule == tt.rule {
					t.Errorf("Scan(%q): unexpected %s %q (score %.2f)", tt.text, e.Rule, tt.text[e.Start:e.End], e.Score)
				}
			}
		})
	}
}

// A Korean RRN issued after October 2020 has no check digit: it is kept, at
// a lower score than a checksummed one, and a high threshold drops it.
func TestKRRRNWithoutCheckDigit(t *testing.T) {
	const text = "번호 900101-1234567"
	e, ok := find(newScanner(t, nil).Scan(text), "KR.RRN")
	if !ok {
		t.Fatalf("post-2020 RRN not detected in %q", text)
	}
	valid, _ := find(newScanner(t, nil).Scan("번호 900101-1234568"), "KR.RRN")
	if e.Score >= valid.Score {
		t.Errorf("unchecked RRN score %.2f, want below the checksummed %.2f", e.Score, valid.Score)
	}
	if _, ok := find(newScanner(t, &Options{Threshold: 0.9}).Scan(text), "KR.RRN"); ok {
		t.Error("unchecked RRN passed threshold 0.9")
	}
	if _, ok := find(newScanner(t, &Options{Threshold: 0.9}).Scan("주민등록번호 900101-1234567"), "KR.RRN"); !ok {
		t.Error("unchecked RRN next to 주민등록번호 did not pass threshold 0.9")
	}
}

func TestContextAndThreshold(t *testing.T) {
	far := strings.Repeat("x", 100)
	tests := []struct {
		name      string
		opts      *Options
		text      string
		wantRules []string
	}{
		{"sort code alone is a date-like number", nil, "on 12-34-56 we met", nil},
		{"sort code with context", nil, "sort code 12-34-56", []string{"UK.SortCode"}},
		{"context beyond the window", nil, "sort code " + far + " 12-34-56", nil},
		{"wider window reaches it", &Options{ContextWindow: 128}, "sort code " + far + " 12-34-56", []string{"UK.SortCode"}},
		{"context word inside another word", nil, "hotel 12-34-56", nil},
		{"context is case-insensitive", nil, "Sort Code: 12-34-56", []string{"UK.SortCode"}},
		{"japanese context", nil, "マイナンバー：123456789018", []string{"JP.MyNumber"}},
		{"chinese context", nil, "身分證A123456789", []string{"TW.NationalID"}},
		{"threshold drops a bare IPv4", &Options{Threshold: 0.9}, "at 10.0.0.1 now", nil},
		{"context lifts it over", &Options{Threshold: 0.9}, "server ip 10.0.0.1", []string{"Global.IPv4"}},
		{"low threshold keeps a bare ZIP", &Options{Threshold: 0.1}, "at 94105", []string{"US.ZIPCode"}},
		{"locale filter", &Options{Locales: []string{"JP"}}, "SSN 123-45-6789 携帯 090-1234-5678", []string{"JP.Phone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ents := newScanner(t, tt.opts).Scan(tt.text)
			var got []string
			for _, e := range ents {
				got = append(got, e.Rule)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantRules, ",") {
				t.Errorf("Scan(%q) rules = %v, want %v", tt.text, got, tt.wantRules)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []*Options{{Threshold: 1.5}, {Threshold: -1}, {ContextWindow: -1}, {Locales: []string{"FR"}}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", *o)
		}
	}
}

// Offsets are UTF-8 byte offsets, so values next to CJK text slice cleanly
// and several values in one CJK sentence are all found.
func TestScanCJKOffsets(t *testing.T) {
	text := "山田さん（taro@example.jp、携帯090-1234-5678、〒150-0001）に連絡。王小明電話0912345678。"
	want := []string{"taro@example.jp", "090-1234-5678", "〒150-0001", "0912345678"}
	ents := newScanner(t, nil).Scan(text)
	var got []string
	for _, e := range ents {
		got = append(got, text[e.Start:e.End])
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("values = %q, want %q", got, want)
	}
}
