package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ratioFloor is the inflated size below which MaxZipRatio is not applied:
// a small, repetitive file legitimately compresses beyond 100x, and a few
// hundred KiB cannot exhaust anything.
const ratioFloor = 1 << 20

// ratioCeiling is the most an entry of compressed size c may inflate to.
func ratioCeiling(c uint64, ratio float64) uint64 {
	return max(uint64(float64(c)*ratio), ratioFloor)
}

// zip extracts every file of the archive data, whose own nesting depth is
// depth (1 for an uploaded archive). Sizes and ratios declared by the
// archive are checked before anything is inflated; the bytes actually
// inflated are counted too, since declarations can lie.
func (x *extractor) zip(ctx context.Context, name string, data []byte, depth int) error {
	if depth > x.lim.MaxZipDepth {
		return fmt.Errorf("extract %s: %w: archives nested %d deep, limit MaxZipDepth %d", name, ErrZipBomb, depth, x.lim.MaxZipDepth)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// ErrInsecurePath ("../x" names) is harmless here: nothing is
		// written to disk, names are only labels.
		return fmt.Errorf("extract %s: read zip: %w", name, err)
	}
	var files []*zip.File
	var declared uint64
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		files = append(files, f)
		declared += f.UncompressedSize64
	}
	x.entries += len(files)
	if x.entries > x.lim.MaxZipEntries {
		return fmt.Errorf("extract %s: %w: more than MaxZipEntries (%d) files in archives", name, ErrZipBomb, x.lim.MaxZipEntries)
	}
	overall := ratioCeiling(uint64(len(data)), x.lim.MaxZipRatio)
	if declared > overall {
		return fmt.Errorf("extract %s: %w: entries declare %d bytes from a %d-byte archive, over MaxZipRatio %g",
			name, ErrZipBomb, declared, len(data), x.lim.MaxZipRatio)
	}
	var inflated uint64
	for _, f := range files {
		entry := name + "/" + entryName(f)
		b, err := readEntry(f, x.lim)
		if err != nil {
			err = fmt.Errorf("extract %s: %w", entry, err)
			if errors.Is(err, ErrZipBomb) || errors.Is(err, ErrTooLarge) {
				return err
			}
			// A damaged entry must not lose the rest of the archive.
			if err := x.add(Document{Name: entry, Warnings: []string{err.Error()}}); err != nil {
				return err
			}
			continue
		}
		inflated += uint64(len(b))
		if inflated > overall {
			return fmt.Errorf("extract %s: %w: entries inflate past %d bytes from a %d-byte archive, over MaxZipRatio %g",
				name, ErrZipBomb, inflated, len(data), x.lim.MaxZipRatio)
		}
		if err := x.file(ctx, entry, b, depth); err != nil {
			if errors.Is(err, ErrZipBomb) || errors.Is(err, ErrTooLarge) || ctx.Err() != nil {
				return err
			}
			// One unreadable entry must not lose the rest of the archive.
			if err := x.add(Document{Name: entry, Warnings: []string{err.Error()}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryName returns the entry's path as UTF-8. Archives made by Japanese
// Windows store names in Shift_JIS without the UTF-8 flag.
func entryName(f *zip.File) string {
	if utf8.ValidString(f.Name) {
		return f.Name
	}
	s, _ := decodeText([]byte(f.Name))
	return s
}

// readEntry inflates one entry into memory, refusing it when its declared
// size or ratio breaks the limits and stopping as soon as the bytes
// actually inflated do.
func readEntry(f *zip.File, lim Limits) ([]byte, error) {
	ceiling := ratioCeiling(f.CompressedSize64, lim.MaxZipRatio)
	if f.UncompressedSize64 > ceiling {
		return nil, fmt.Errorf("%w: declares %d bytes from %d compressed, over MaxZipRatio %g",
			ErrZipBomb, f.UncompressedSize64, f.CompressedSize64, lim.MaxZipRatio)
	}
	if f.UncompressedSize64 > uint64(lim.MaxFileBytes) {
		return nil, fmt.Errorf("%w: declares %d bytes, over MaxFileBytes %d",
			ErrTooLarge, f.UncompressedSize64, lim.MaxFileBytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open zip entry: %w", err)
	}
	defer rc.Close()
	stop := min(ceiling, uint64(lim.MaxFileBytes))
	b, err := io.ReadAll(io.LimitReader(rc, int64(stop)+1))
	if uint64(len(b)) > stop {
		if uint64(len(b)) > ceiling {
			return nil, fmt.Errorf("%w: inflates past %d bytes from %d compressed, over MaxZipRatio %g",
				ErrZipBomb, ceiling, f.CompressedSize64, lim.MaxZipRatio)
		}
		return nil, fmt.Errorf("%w: inflates past MaxFileBytes %d", ErrTooLarge, lim.MaxFileBytes)
	}
	if errors.Is(err, zip.ErrFormat) {
		// While reading, archive/zip reports ErrFormat only for an entry
		// that inflates past its declared size: the declaration lied to
		// slip past the checks above.
		return nil, fmt.Errorf("%w: inflates past its declared %d bytes", ErrZipBomb, f.UncompressedSize64)
	}
	if err != nil {
		return nil, fmt.Errorf("inflate zip entry: %w", err)
	}
	return b, nil
}

// isDOCX reports whether a ZIP holds word/document.xml.
func isDOCX(data []byte) bool {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			return true
		}
	}
	return false
}
