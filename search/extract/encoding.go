package extract

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	xunicode "golang.org/x/text/encoding/unicode"
)

// Encoding names returned by DetectEncoding.
const (
	encUTF8        = "UTF-8"
	encUTF8BOM     = "UTF-8 BOM"
	encUTF16LE     = "UTF-16LE"
	encUTF16BE     = "UTF-16BE"
	encShiftJIS    = "Shift_JIS"
	encEUCJP       = "EUC-JP"
	encWindows1252 = "windows-1252"
)

// DetectEncoding names the character encoding of text data. The heuristic:
//
//  1. A byte order mark decides: UTF-8, UTF-16LE or UTF-16BE.
//  2. Data that is valid UTF-8 is UTF-8 (ASCII included).
//  3. Otherwise Shift_JIS, EUC-JP and windows-1252 are each tried as a
//     strict decoding: a byte sequence the encoding does not define counts
//     as an error (x/text substitutes U+FFFD for it, which we count).
//     The candidate with the fewest errors wins. Among equals, the one
//     yielding the most Japanese characters (kana, kanji, Japanese
//     punctuation and full-width forms) wins, and on a further tie the
//     earlier of Shift_JIS, EUC-JP, windows-1252. Half-width katakana do
//     not count as Japanese: Latin-1 accented letters and EUC-JP bytes
//     both decode as half-width katakana under Shift_JIS, while real text
//     rarely uses them. A Japanese candidate yielding no Japanese character
//     loses to windows-1252, the last resort for legacy Western text.
//
// Short Latin-1 text can occasionally decode as valid Shift_JIS kanji; for
// a platform whose users are mostly Japanese that is the cheaper mistake.
// The whole input is examined; callers pass a prefix to bound the cost.
func DetectEncoding(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return encUTF8BOM
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return encUTF16LE
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return encUTF16BE
	}
	if utf8.Valid(data) {
		return encUTF8
	}
	best, bestErrs, bestJa := encWindows1252, countInvalid(charmap.Windows1252, data), 0
	// Walk in reverse preference order so that ties keep the earlier one.
	for _, c := range []struct {
		name string
		enc  encoding.Encoding
	}{{encEUCJP, japanese.EUCJP}, {encShiftJIS, japanese.ShiftJIS}} {
		s, err := c.enc.NewDecoder().Bytes(data)
		if err != nil {
			continue
		}
		errs, ja := japaneseScore(string(s))
		if ja == 0 {
			continue
		}
		if errs < bestErrs || errs == bestErrs && ja >= bestJa {
			best, bestErrs, bestJa = c.name, errs, ja
		}
	}
	return best
}

// countInvalid counts the replacement characters enc produces for data.
func countInvalid(enc encoding.Encoding, data []byte) int {
	s, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return len(data) + 1
	}
	return bytes.Count(s, []byte(string(utf8.RuneError)))
}

// japaneseScore counts, in decoded text, replacement characters (decoding
// errors) and Japanese characters.
func japaneseScore(s string) (errs, ja int) {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			errs++
		case unicode.Is(unicode.Hiragana, r),
			r >= 0x30A0 && r <= 0x30FF: // full-width katakana block only
			ja++
		case unicode.Is(unicode.Han, r),
			r >= 0x3000 && r <= 0x303F, // CJK punctuation 、。「」
			r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII variants
			ja++
		}
	}
	return errs, ja
}

// decodeText converts data to UTF-8 using DetectEncoding on a prefix of at
// most 64 KiB, and returns warnings when the encoding was a guess or the
// text had undecodable bytes.
func decodeText(data []byte) (string, []string) {
	head := data
	if len(head) > 64<<10 {
		head = trimToBoundary(head[:64<<10])
	}
	name := DetectEncoding(head)
	var enc encoding.Encoding
	switch name {
	case encUTF8:
		if utf8.Valid(data) {
			return string(data), nil
		}
		s := string(bytes.ToValidUTF8(data, []byte(string(utf8.RuneError))))
		return s, []string{"text is not valid UTF-8 after the first 64 KiB; invalid bytes were replaced with U+FFFD"}
	case encUTF8BOM:
		return decodeText(data[3:])
	case encUTF16LE:
		enc = xunicode.UTF16(xunicode.LittleEndian, xunicode.ExpectBOM)
	case encUTF16BE:
		enc = xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM)
	case encShiftJIS:
		enc = japanese.ShiftJIS
	case encEUCJP:
		enc = japanese.EUCJP
	default:
		enc = charmap.Windows1252
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return string(bytes.ToValidUTF8(data, []byte(string(utf8.RuneError)))),
			[]string{fmt.Sprintf("could not decode text as %s: %v; invalid bytes were replaced", name, err)}
	}
	var warns []string
	switch name {
	case encShiftJIS, encEUCJP, encWindows1252:
		warns = append(warns, fmt.Sprintf("text encoding detected as %s (a guess: the file has no byte order mark and is not UTF-8)", name))
	}
	if n := bytes.Count(out, []byte(string(utf8.RuneError))); n > 0 {
		warns = append(warns, fmt.Sprintf("%d byte sequences could not be decoded as %s and were replaced with U+FFFD", n, name))
	}
	return string(out), warns
}

// trimToBoundary drops up to 3 trailing bytes that may be a multibyte
// character cut in half, which would otherwise count as a decoding error.
// It only trims bytes with the high bit set, so ASCII text is untouched.
func trimToBoundary(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0 && b[len(b)-1] >= 0x80; i++ {
		b = b[:len(b)-1]
	}
	return b
}
