package extract

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCSV(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,city,note\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "user%d,\"Tokyo, JP\",\n", i)
	}
	d := extractOne(t, "users.csv", []byte(b.String()), nil)
	if diff := cmp.Diff([]string{"rows 1-50", "rows 51-100", "rows 101-120"}, headings(d)); diff != "" {
		t.Errorf("headings (-want +got)\n%s", diff)
	}
	lines := strings.Split(d.Sections[0].Text, "\n")
	if len(lines) != 50 || lines[0] != "name: user1; city: Tokyo, JP" {
		t.Errorf("first section: %d lines, first %q", len(lines), lines[0])
	}

	d = extractOne(t, "data.tsv", []byte("a\tb\n1\t2\t3\n"), nil)
	if d.Text != "a: 1; b: 2; column 3: 3" {
		t.Errorf("tsv text = %q", d.Text)
	}
	d = extractOne(t, "eu.csv", []byte("Name;Preis\nApfel;1,20\n"), nil)
	if d.Text != "Name: Apfel; Preis: 1,20" {
		t.Errorf("semicolon csv text = %q", d.Text)
	}
}

func TestJSON(t *testing.T) {
	d := extractOne(t, "items.json", []byte(`[{"b":1,"a":"日本 <x>"},{"z":[true,null,1.50]}, "s"]`), nil)
	want := []Section{
		{Text: "{\n  \"b\": 1,\n  \"a\": \"日本 <x>\"\n}", Heading: "[0]"},
		{Text: "{\n  \"z\": [\n    true,\n    null,\n    1.50\n  ]\n}", Heading: "[1]"},
		{Text: `"s"`, Heading: "[2]"},
	}
	want[1].Offset = len(want[0].Text) + 2
	want[2].Offset = want[1].Offset + len(want[1].Text) + 2
	if diff := cmp.Diff(want, d.Sections); diff != "" {
		t.Errorf("sections (-want +got)\n%s", diff)
	}

	d = extractOne(t, "config.json", []byte(`{"name":"kb","empty":{},"list":[]}`), nil)
	if want := "{\n  \"name\": \"kb\",\n  \"empty\": {},\n  \"list\": []\n}"; d.Text != want || d.Sections[0].Heading != "" {
		t.Errorf("object: %q heading %q", d.Text, d.Sections[0].Heading)
	}

	d = extractOne(t, "log.jsonl", []byte("{\"a\":1}\n{\"a\":2}\n"), nil)
	if diff := cmp.Diff([]string{"[0]", "[1]"}, headings(d)); diff != "" {
		t.Errorf("jsonl headings (-want +got)\n%s", diff)
	}

	if _, err := Extract(t.Context(), "bad.json", strings.NewReader(`{"a":`), nil); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("err = %v, want a parse error naming the file", err)
	}
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if _, err := Extract(t.Context(), "deep.json", strings.NewReader(deep), nil); err == nil {
		t.Error("deeply nested JSON: want an error")
	}
	_, err := Extract(t.Context(), "wide.json", strings.NewReader(`[`+strings.Repeat(`{"k":[[[[1]]]]},`, 1000)+`1]`), &Limits{MaxExtractedBytes: 5000})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}
