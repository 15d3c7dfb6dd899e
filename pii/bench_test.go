package pii

import (
	"regexp"
	"strings"
	"testing"
)

// benchText is about 1 MB of mixed English and Japanese prose with ordinary
// numbers (dates, prices, counts) and some personal data in every paragraph.
var benchText = func() string {
	paras := []string{
		"The quarterly report for 2025 shows revenue of 1,234 million yen across 12 regions. Contact our support desk by email at support@example.com or call +1 212 555 0123 for details. ",
		"本日の会議では、新しいプロジェクトの進捗について話し合いました。担当者の山田さん（携帯090-1234-5678）から、来週までに資料をまとめるとの報告がありました。",
		"We deployed version 3 of the service to 40 servers last week; the database at 10.0.3.17 was migrated without downtime, and latency dropped by 25 percent. ",
		"お客様の住所は〒150-0001 東京都渋谷区神宮前1丁目です。マイナンバーは書類に記載しないでください。配送は3営業日以内に行われます。",
		"Please do not paste card numbers such as 4111 1111 1111 1111 into chat. Our office hours are 9 to 17, Monday to Friday, except national holidays. ",
		"機械学習モデルの評価では、精度と再現率のバランスが重要です。テストデータは全体の20%を使用し、残りを学習と検証に分けました。結果は良好でした。",
		"Long paragraphs of plain prose without any digits are the common case: the model reads the question, thinks about the context, and writes an answer. ",
		"この文章には数字も個人情報も含まれていません。ただ日本語の文章が続くだけで、スキャナーはほとんど何もせずに通過するべきです。",
	}
	var b strings.Builder
	for b.Len() < 1<<20 {
		for _, p := range paras {
			b.WriteString(p)
		}
		b.WriteString("\n")
	}
	return b.String()
}()

func BenchmarkScan(b *testing.B) {
	s := newScanner(b, nil)
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		s.Scan(benchText)
	}
}

// BenchmarkScanNoPrefilter is the peer of BenchmarkScan: every digit rule's
// regular expression over the whole text, as a naive scanner would do. It
// shows what the digit-region prefilter saves.
func BenchmarkScanNoPrefilter(b *testing.B) {
	var res []*regexp.Regexp
	for _, r := range newScanner(b, nil).digitRules {
		// "^(core)(?:…)" → "(?:^|[^0-9A-Za-z])(core)(?:…)": search, not anchored.
		res = append(res, regexp.MustCompile(`(?:^|[^0-9A-Za-z])`+strings.TrimPrefix(r.re.String(), "^")))
	}
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		for _, re := range res {
			re.FindAllStringSubmatchIndex(benchText, -1)
		}
	}
}

func BenchmarkMask(b *testing.B) {
	s := newScanner(b, nil)
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := NewMasker(s, nil)
		if err != nil {
			b.Fatal(err)
		}
		m.Mask(benchText)
	}
}
