package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/japanese"
)

func docNames(docs []Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Name)
	}
	return out
}

func TestZipNested(t *testing.T) {
	inner := zipOf(t, map[string][]byte{
		"deep/notes.md": []byte("# Deep\ntext"),
	})
	outer := zipOf(t, map[string][]byte{
		"a.txt":              []byte("alpha"),
		"dir/":               nil,
		"dir/inner.zip":      inner,
		"dir/page.html":      []byte("<title>P</title><p>page</p>"),
		"__MACOSX/._a.txt":   []byte("resource fork"),
		"../../etc/evil.txt": []byte("just a name"),
		"binary.exe":         {0x4d, 0x5a, 0x00, 0x01},
	})
	docs, err := Extract(context.Background(), "archive.zip", bytes.NewReader(outer), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"archive.zip/../../etc/evil.txt",
		"archive.zip/a.txt",
		"archive.zip/binary.exe",
		"archive.zip/dir/inner.zip/deep/notes.md",
		"archive.zip/dir/page.html",
	}
	if diff := cmp.Diff(want, docNames(docs)); diff != "" {
		t.Fatalf("names (-want +got)\n%s", diff)
	}
	for _, d := range docs {
		checkDoc(t, d)
	}
	if docs[3].Text != "# Deep\ntext" || docs[3].Sections[0].Heading != "Deep" {
		t.Errorf("nested doc = %+v", docs[3])
	}
	// An unsupported entry is reported, not fatal to the archive.
	if len(docs[2].Warnings) != 1 || !strings.Contains(docs[2].Warnings[0], "unsupported") || docs[2].Text != "" {
		t.Errorf("unsupported entry = %+v", docs[2])
	}
}

func TestZipShiftJISNames(t *testing.T) {
	raw, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte("資料/議事録.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: string(raw), Method: zip.Deflate, NonUTF8: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("会議の記録"))
	zw.Close()
	docs, err := Extract(context.Background(), "jp.zip", &buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"jp.zip/資料/議事録.txt"}, docNames(docs)); diff != "" {
		t.Errorf("names (-want +got)\n%s", diff)
	}
}

// zerosZip writes one Deflate entry of n zero bytes (n a multiple of
// 1 MiB) without compressing n bytes: it repeats the deflate blocks of one
// MiB of zeros. Blocks ended by a sync flush are byte-aligned and not
// final, and back-references into earlier output can only copy zeros, so
// the repetitions form one valid stream.
func zerosZip(t testing.TB, name string, n int) []byte {
	t.Helper()
	const chunk = 1 << 20
	var block bytes.Buffer
	fw, err := flate.NewWriter(&block, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, chunk)
	fw.Write(zeros)
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	crc := uint32(0)
	for range n / chunk {
		stream.Write(block.Bytes())
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	stream.Write([]byte{0x01, 0x00, 0x00, 0xff, 0xff}) // final empty stored block

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(stream.Len()), UncompressedSize64: uint64(n),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(stream.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The hand-made stream must really inflate to n zeros, or the bomb tests
// would prove nothing.
func TestZerosZipIsValid(t *testing.T) {
	data := zerosZip(t, "z", 3<<20)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc) // also verifies the CRC
	if err != nil || n != 3<<20 {
		t.Fatalf("inflated %d bytes, err %v", n, err)
	}
}

func TestZipBomb(t *testing.T) {
	bomb := zerosZip(t, "zeros.txt", 200<<20)
	t.Logf("200 MB of zeros compressed to %d bytes", len(bomb))
	start := time.Now()
	_, err := Extract(context.Background(), "bomb.zip", bytes.NewReader(bomb), nil)
	if !errors.Is(err, ErrZipBomb) {
		t.Fatalf("err = %v, want ErrZipBomb", err)
	}
	for _, want := range []string{"bomb.zip", "MaxZipRatio"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing the bomb took %v; it must not inflate it", d)
	}
}

func TestZipRatioLowered(t *testing.T) {
	data := zerosZip(t, "z.txt", 3<<20)
	_, err := Extract(context.Background(), "r.zip", bytes.NewReader(data), &Limits{MaxZipRatio: 10})
	if !errors.Is(err, ErrZipBomb) {
		t.Errorf("err = %v, want ErrZipBomb", err)
	}
	// Within the defaults (ratio high, but the entry is small) it is fine.
	small := zerosZip(t, "z.txt", 100<<10)
	if _, err := Extract(context.Background(), "s.zip", bytes.NewReader(small), nil); err != nil {
		t.Errorf("small repetitive entry: %v", err)
	}
}

// A central directory that understates the entry's size must not let the
// entry inflate unchecked.
func TestZipLyingSize(t *testing.T) {
	data := zerosZip(t, "z.txt", 2<<20)
	i := bytes.LastIndex(data, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(data[i+24:], 100) // uncompressed size
	_, err := Extract(context.Background(), "lie.zip", bytes.NewReader(data), nil)
	if !errors.Is(err, ErrZipBomb) || !strings.Contains(err.Error(), "declared") {
		t.Errorf("err = %v, want ErrZipBomb about the declared size", err)
	}
}

func TestZipTooLargeEntry(t *testing.T) {
	data := zipOf(t, map[string][]byte{"big.txt": bytes.Repeat([]byte("abcdefgh"), 1000)})
	_, err := Extract(context.Background(), "a.zip", bytes.NewReader(data), &Limits{MaxFileBytes: 4000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a.zip/big.txt") {
		t.Errorf("err = %v, want ErrTooLarge naming the entry", err)
	}
}

func TestZipDepth(t *testing.T) {
	data := zipOf(t, map[string][]byte{"x.txt": []byte("x")})
	for range 3 {
		data = zipOf(t, map[string][]byte{"n.zip": data})
	}
	// Four archives deep, default limit 3.
	_, err := Extract(context.Background(), "deep.zip", bytes.NewReader(data), nil)
	if !errors.Is(err, ErrZipBomb) || !strings.Contains(err.Error(), "MaxZipDepth") {
		t.Errorf("err = %v, want ErrZipBomb for MaxZipDepth", err)
	}
	docs, err := Extract(context.Background(), "deep.zip", bytes.NewReader(data), &Limits{MaxZipDepth: 4})
	if err != nil || len(docs) != 1 || docs[0].Name != "deep.zip/n.zip/n.zip/n.zip/x.txt" {
		t.Errorf("with MaxZipDepth 4: %v, %v", docNames(docs), err)
	}
}

func TestZipEntries(t *testing.T) {
	files := map[string][]byte{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+".txt"] = []byte(n)
	}
	_, err := Extract(context.Background(), "many.zip", bytes.NewReader(zipOf(t, files)), &Limits{MaxZipEntries: 3})
	if !errors.Is(err, ErrZipBomb) || !strings.Contains(err.Error(), "MaxZipEntries") {
		t.Errorf("err = %v, want ErrZipBomb for MaxZipEntries", err)
	}
}

// Many entries, each too small for the per-entry ratio check, still add
// up past the archive's overall ratio.
func TestZipOverallRatio(t *testing.T) {
	const size = 512 << 10
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, flate.BestCompression)
	fw.Write(make([]byte, size))
	fw.Close()
	crc := crc32.ChecksumIEEE(make([]byte, size))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range 40 {
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name: fmt.Sprintf("z%02d.txt", i), Method: zip.Deflate, CRC32: crc,
			CompressedSize64: uint64(raw.Len()), UncompressedSize64: size,
		})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw.Bytes())
	}
	zw.Close()
	_, err := Extract(context.Background(), "many.zip", &buf, nil)
	if !errors.Is(err, ErrZipBomb) || !strings.Contains(err.Error(), "archive") {
		t.Errorf("err = %v, want ErrZipBomb for the whole archive", err)
	}
}
