//go:build e2e_node

package framework

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// WriteMarkdownSection replaces the section id of a markdown file (between
// its BEGIN and END marker comments) with body, appending the section if
// the file does not have it yet and creating the file if needed. Other
// sections, written by other tools, stay as they are.
func WriteMarkdownSection(path, id, body string) error {
	begin := fmt.Sprintf("<!-- BEGIN %s -->", id)
	end := fmt.Sprintf("<!-- END %s -->", id)
	section := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end + "\n"

	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	text := string(data)
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	switch {
	case i >= 0 && j > i:
		text = text[:i] + section + strings.TrimPrefix(text[j+len(end):], "\n")
	case i >= 0 || j >= 0:
		return fmt.Errorf("%s: section %s has only one of its markers", path, id)
	case text == "":
		text = section
	default:
		text = strings.TrimRight(text, "\n") + "\n\n" + section
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
