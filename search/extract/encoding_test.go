package extract

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	xunicode "golang.org/x/text/encoding/unicode"
)

const japaneseSample = "日本語のテキストです。カタカナとひらがな、漢字を含みます。\n第二段落：検索拡張生成（RAG）の資料。\n"

func mustEncode(t testing.TB, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func TestEncodings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     []byte
		encoding string
		guessed  bool // a warning says the encoding was guessed
	}{
		{"utf8.txt", []byte(japaneseSample), "UTF-8", false},
		{"utf8bom.txt", append([]byte{0xEF, 0xBB, 0xBF}, japaneseSample...), "UTF-8 BOM", false},
		{"utf16le.txt", mustEncode(t, xunicode.UTF16(xunicode.LittleEndian, xunicode.UseBOM), japaneseSample), "UTF-16LE", false},
		{"utf16be.txt", mustEncode(t, xunicode.UTF16(xunicode.BigEndian, xunicode.UseBOM), japaneseSample), "UTF-16BE", false},
		{"sjis.txt", mustEncode(t, japanese.ShiftJIS, japaneseSample), "Shift_JIS", true},
		{"eucjp.txt", mustEncode(t, japanese.EUCJP, japaneseSample), "EUC-JP", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectEncoding(tc.data); got != tc.encoding {
				t.Errorf("DetectEncoding = %q, want %q", got, tc.encoding)
			}
			d := extractOne(t, tc.name, tc.data, nil)
			if d.Text != strings.TrimSpace(japaneseSample) {
				t.Errorf("text = %q", d.Text)
			}
			if got := len(d.Warnings) > 0; got != tc.guessed {
				t.Errorf("warnings = %q, want guessed=%v", d.Warnings, tc.guessed)
			}
		})
	}
}

func TestEncodingShortAndLatin(t *testing.T) {
	// Short Japanese strings in each encoding, as in file names and cells.
	for _, s := range []string{"あ", "テスト", "こんにちは世界", "見出し１"} {
		if got := DetectEncoding(mustEncode(t, japanese.ShiftJIS, s)); got != "Shift_JIS" {
			t.Errorf("Shift_JIS %q detected as %s", s, got)
		}
		if got := DetectEncoding(mustEncode(t, japanese.EUCJP, s)); got != "EUC-JP" {
			t.Errorf("EUC-JP %q detected as %s", s, got)
		}
	}
	latin := mustEncode(t, charmap.Windows1252, "Café crème à la française, naïve façade.")
	if got := DetectEncoding(latin); got != "windows-1252" {
		t.Errorf("Latin-1 text detected as %s", got)
	}
	d := extractOne(t, "fr.txt", latin, nil)
	if !strings.Contains(d.Text, "Café crème") {
		t.Errorf("text = %q", d.Text)
	}
}

// A Shift_JIS CSV, as exported by Excel in Japan.
func TestShiftJISCSV(t *testing.T) {
	data := mustEncode(t, japanese.ShiftJIS, "名前,部署\r\n山田,営業\r\n")
	d := extractOne(t, "社員.csv", data, nil)
	if d.Text != "名前: 山田; 部署: 営業" {
		t.Errorf("text = %q", d.Text)
	}
}

func TestHTMLEncodings(t *testing.T) {
	declared := mustEncode(t, japanese.ShiftJIS, `<html><head><meta charset="Shift_JIS"><title>お知らせ</title></head><body><p>本文です。</p></body></html>`)
	d := extractOne(t, "news.html", declared, nil)
	if d.Title != "お知らせ" || d.Text != "本文です。" {
		t.Errorf("declared Shift_JIS: title %q text %q", d.Title, d.Text)
	}
	undeclared := mustEncode(t, japanese.EUCJP, `<html><body><h1>会議室の予約</h1><p>予約はこちら。</p></body></html>`)
	d = extractOne(t, "old.html", undeclared, nil)
	if d.Title != "会議室の予約" || !strings.Contains(d.Text, "予約はこちら。") {
		t.Errorf("undeclared EUC-JP: title %q text %q", d.Title, d.Text)
	}
}
