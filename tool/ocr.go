package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// Defaults of OCRImage.
const (
	DefaultOCRTimeout      = 60 * time.Second
	DefaultOCRMaxImage     = 10 << 20
	DefaultOCRMaxOutput    = 64 << 10
	ocrNotInstalled        = "tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-jpn)"
	ocrJapaneseMissingNote = "[OCR ran in English only: install tesseract-ocr-jpn for Japanese]"
)

// OCRImage is the built-in "ocr_image" tool: it reads the text of an
// image with the tesseract command (Debian's tesseract-ocr, English and
// Japanese). The image is base64 data in the arguments or, when Files is
// set, a file in the file tools' sandbox. The zero value accepts base64
// only.
//
// Without tesseract on PATH the tool is still registered and answers every
// call with an error result saying so, so that an agent configured with it
// fails plainly rather than at start-up.
type OCRImage struct {
	// Files, if set, lets "path" name an image in its sandbox.
	Files *FileTools
	// Timeout bounds one run of tesseract. Default DefaultOCRTimeout.
	Timeout time.Duration
	// MaxImageBytes bounds the image. Default DefaultOCRMaxImage.
	MaxImageBytes int
	// LookPath finds the tesseract binary. Default exec.LookPath; tests
	// replace it.
	LookPath func(file string) (string, error)
}

var _ Tool = OCRImage{}

var ocrImageArgs = mustArgSchema("ocr_image",
	`{"type":"object","properties":{`+
		`"image_base64":{"type":"string","minLength":1,"description":"The image (PNG, JPEG, TIFF, BMP, GIF) as base64, without a data: prefix."},`+
		`"path":{"type":"string","minLength":1,"description":"Path of an image file in the shared files directory, as file_list shows it."}},`+
		`"additionalProperties":false}`,
	`{"path": "scans/receipt.png"}`)

// Name implements Tool.
func (OCRImage) Name() string { return "ocr_image" }

// Description implements Tool.
func (o OCRImage) Description() string {
	from := "Pass the image as image_base64."
	if o.Files != nil {
		from = "Pass either path (an image file in the shared files directory) or image_base64."
	}
	return "Read the text in an image (a scan, a screenshot, a photo of a document) with OCR, English and Japanese. " + from +
		" Returns the recognised text; recognition can contain mistakes, so check numbers that matter."
}

// Schema implements Tool.
func (OCRImage) Schema() json.RawMessage { return ocrImageArgs.raw }

// Capability implements Tool: it reads files of the sandbox.
func (OCRImage) Capability() Capability { return CapabilityMedium }

// Call implements Tool.
func (o OCRImage) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		ImageBase64 string `json:"image_base64"`
		Path        string `json:"path"`
	}
	if res, ok := ocrImageArgs.parse(args, &in); !ok {
		return res, nil
	}
	lookPath := o.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	bin, err := lookPath("tesseract")
	if err != nil {
		return ErrorResult(ocrNotInstalled), nil
	}
	maxImage := orDefault(o.MaxImageBytes, DefaultOCRMaxImage)
	var img []byte
	switch {
	case in.ImageBase64 != "" && in.Path != "":
		return ErrorResult(`pass either "path" or "image_base64", not both`), nil
	case in.Path != "":
		if o.Files == nil {
			return ErrorResult(`"path" is not available: no files directory is configured; pass the image as "image_base64"`), nil
		}
		if img, err = o.readFile(in.Path, maxImage); err != nil {
			return ErrorResult("%v", err), nil
		}
	case in.ImageBase64 != "":
		s := in.ImageBase64
		if _, rest, ok := strings.Cut(s, ";base64,"); ok && strings.HasPrefix(s, "data:") {
			s = rest // a data: URL, as models sometimes write
		}
		if base64.StdEncoding.DecodedLen(len(s)) > maxImage+3 {
			return ErrorResult(`"image_base64" holds more than %d bytes: send a smaller image`, maxImage), nil
		}
		img, err = base64.StdEncoding.DecodeString(strings.TrimRight(s, "\n"))
		if err != nil {
			return ErrorResult(`"image_base64" is not valid base64: %v`, err), nil
		}
	default:
		return ErrorResult(`missing image: pass "path" (a file in the shared files directory) or "image_base64"`), nil
	}
	if !strings.HasPrefix(http.DetectContentType(img), "image/") {
		return ErrorResult("the data is not an image (detected %s): pass a PNG, JPEG, TIFF, BMP or GIF", http.DetectContentType(img)), nil
	}

	timeout := orDefault(o.Timeout, DefaultOCRTimeout)
	text, stderr, err := runTesseract(ctx, bin, img, "eng+jpn", timeout)
	note := ""
	if err != nil && ctx.Err() == nil && strings.Contains(stderr, "jpn") {
		// The Japanese pack is missing: English is better than nothing.
		text, stderr, err = runTesseract(ctx, bin, img, "eng", timeout)
		note = ocrJapaneseMissingNote
	}
	if cerr := ctx.Err(); cerr != nil {
		return Result{}, cerr
	}
	if err != nil {
		return ErrorResult("OCR failed: %v: %s", err, firstLine(stderr)), nil
	}
	text = strings.TrimSpace(text)
	if text == "" {
		text = "(no text recognised)"
	}
	if len(text) > DefaultOCRMaxOutput {
		text = string(trimCutRunes([]byte(text[:DefaultOCRMaxOutput]), false)) + "\n[text truncated]"
	}
	if note != "" {
		text += "\n" + note
	}
	return Result{Content: text}, nil
}

// readFile reads an image from the sandbox, with messages for the model.
func (o OCRImage) readFile(p string, max int) ([]byte, error) {
	clean, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	root, err := o.Files.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(clean)
	if err != nil {
		return nil, errors.New(fsMessage(p, err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a file", p)
	}
	img, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, errors.New(fsMessage(p, err))
	}
	if len(img) > max {
		return nil, fmt.Errorf("%q is larger than %d bytes: OCR a smaller image", p, max)
	}
	return img, nil
}

// runTesseract runs tesseract on data through stdin and stdout, so nothing
// is written to disk. search/extract runs it the same way for images in
// documents.
func runTesseract(ctx context.Context, bin string, data []byte, langs string, timeout time.Duration) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-", "-", "-l", langs)
	cmd.Stdin = bytes.NewReader(data)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", timeout)
	}
	return out.String(), errOut.String(), err
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l
	}
	return s
}
