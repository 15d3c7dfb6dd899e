package extract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cyclePDF is the fuzz finding: a page tree whose second-level Pages node
// lists the root among its Kids. The parser's Reader.Page looped on it
// forever.
func cyclePDF(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/fuzz/FuzzExtract/55c14562bdce073c")
	if err != nil {
		t.Fatal(err)
	}
	// The corpus file holds the bytes as a Go string literal.
	lines := strings.Split(string(b), "\n")
	lit := strings.TrimSuffix(strings.TrimPrefix(lines[2], "[]byte("), ")")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

func TestPDFPageTreeCycle(t *testing.T) {
	parentCycle := buildPDF(t, "1.4", "T", "Hello")
	// The page's Parent is itself, and it has no Resources of its own, so
	// finding its inherited Resources never ends.
	// (padded to keep the xref's offsets right).
	old := "/Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
	repl := "/Parent 5 0 R /MediaBox [0 0 612 792]"
	parentCycle = bytes.Replace(parentCycle, []byte(old), []byte(repl+strings.Repeat(" ", len(old)-len(repl))), 1)
	for name, tt := range map[string]struct {
		data     []byte
		wantErr  string
		wantWarn string
	}{
		"kids":   {data: cyclePDF(t), wantErr: "page tree has a cycle"},
		"parent": {data: parentCycle, wantWarn: "Parent chain does not end"},
	} {
		t.Run(name, func(t *testing.T) {
			for via, extract := range map[string]func(context.Context, string, *bytes.Reader, *Limits) ([]Document, error){
				"in-process": func(ctx context.Context, n string, r *bytes.Reader, l *Limits) ([]Document, error) {
					return Extract(ctx, n, r, l)
				},
				"isolated": func(ctx context.Context, n string, r *bytes.Reader, l *Limits) ([]Document, error) {
					return Isolated(ctx, n, r, l)
				},
			} {
				start := time.Now()
				docs, err := extract(context.Background(), "cycle.pdf", bytes.NewReader(tt.data), &Limits{Timeout: 5 * time.Second})
				d := time.Since(start)
				t.Logf("%s: %v after %v", via, err, d.Round(time.Millisecond))
				if d > 5*time.Second {
					t.Errorf("%s: took %v", via, d)
				}
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "cycle.pdf") {
						t.Errorf("%s: err = %v, want one naming the file and saying %q", via, err, tt.wantErr)
					}
					continue
				}
				if err != nil || len(docs) != 1 || !strings.Contains(strings.Join(docs[0].Warnings, "\n"), tt.wantWarn) {
					t.Errorf("%s: docs %+v, err %v; want a warning saying %q", via, docs, err, tt.wantWarn)
				}
			}
		})
	}
}

func TestIsolated(t *testing.T) {
	files := map[string][]byte{
		"manual.pdf": buildPDF(t, "1.4", "Test Manual", "Hello PDF", "Second page"),
		"a.zip":      zipOf(t, map[string][]byte{"a.md": []byte("# A\ntext"), "b.csv": []byte("x,y\n1,2\n")}),
		"n.txt":      []byte("plain"),
	}
	for name, data := range files {
		want, err := Extract(context.Background(), name, bytes.NewReader(data), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Isolated(context.Background(), name, bytes.NewReader(data), nil)
		if err != nil {
			t.Fatalf("Isolated(%s): %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Isolated(%s) differs from Extract (-want +got):\n%s", name, diff)
		}
	}

	// Errors keep their sentinels across the process boundary.
	if _, err := Isolated(context.Background(), "x.bin", bytes.NewReader([]byte{0, 1, 2}), nil); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "x.bin") {
		t.Errorf("unsupported: err = %v, want ErrUnsupported naming x.bin", err)
	}
	big := bytes.Repeat([]byte("line of text\n"), 1<<16)
	if _, err := Isolated(context.Background(), "big.txt", bytes.NewReader(big), &Limits{MaxExtractedBytes: 1 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxExtractedBytes: err = %v, want ErrTooLarge", err)
	}
	start := time.Now()
	if _, err := Isolated(context.Background(), "big.txt", bytes.NewReader(big), &Limits{Timeout: time.Nanosecond}); !errors.Is(err, ErrTimeout) || time.Since(start) > 3*time.Second {
		t.Errorf("timeout: err = %v after %v, want ErrTimeout", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Isolated(ctx, "n.txt", bytes.NewReader([]byte("x")), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

// TestIsolatedKillsAtDeadline: a parser busy inside one file does not look
// at ctx (the HTML parser here, the PDF parser looping on a cycle before
// pdfPages); the child running it is killed at the deadline.
func TestIsolatedKillsAtDeadline(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><body>")
	// 45 MiB: about 4.5 s of parsing on this machine, 35 s under -race;
	// the bound below leaves room for a loaded machine to start and kill
	// the child, and still fails if the parse is allowed to finish.
	for range 1300000 {
		b.WriteString("<div><p>para <b>bold</b> text</p></div>")
	}
	const timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := Isolated(context.Background(), "big.html", strings.NewReader(b.String()), &Limits{Timeout: timeout})
	d := time.Since(start)
	t.Logf("%v after %v", err, d.Round(time.Millisecond))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "big.html") {
		t.Errorf("err = %v, want ErrTimeout naming big.html", err)
	}
	limit := timeout + isolateGrace + 2500*time.Millisecond
	if raceEnabled {
		limit += 5 * time.Second // the parse alone would take 35 s
	}
	if d > limit {
		t.Errorf("ended after %v, more than %v", d, limit)
	}
}
