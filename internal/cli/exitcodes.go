package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// exitCodesText renders the exit codes and run.json's statuses from their
// tables, for the root command's help and `ycsbctl help exit-codes`.
func exitCodesText() string {
	var b strings.Builder
	b.WriteString("Exit codes (run.json records the code and its name as exit_code and exit_reason):\n")
	codes, statuses := exitcode.Table(), run.Statuses()
	width := 0
	for _, c := range codes {
		width = max(width, len(c.Name))
	}
	for _, c := range codes {
		writeRow(&b, fmt.Sprintf("  %d  %-*s  ", int(c.Code), width, c.Name), c.Meaning)
	}
	b.WriteString("\nStatuses of a run (run.json's status):\n")
	width = 0
	for _, s := range statuses {
		width = max(width, len(s.Status))
	}
	for _, s := range statuses {
		writeRow(&b, fmt.Sprintf("  %-*s  ", width, s.Status), s.Meaning)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeRow writes head and then text wrapped at 90 columns, continuation
// lines indented under the text.
func writeRow(b *strings.Builder, head, text string) {
	const width = 90
	indent := strings.Repeat(" ", len(head))
	line := head
	sep := ""
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > width && len(line) > len(head) {
			b.WriteString(line + "\n")
			line, sep = indent, ""
		}
		line += sep + w
		sep = " "
	}
	b.WriteString(line + "\n")
}

// exitCodesMarkdown renders the same tables for docs/exit-codes.md.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning |\n|---|---|---|\n")
	for _, c := range exitcode.Table() {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", int(c.Code), c.Name, c.Meaning)
	}
	b.WriteString("\n| status | meaning |\n|---|---|\n")
	for _, s := range run.Statuses() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Status, s.Meaning)
	}
	return b.String()
}

// newExitCodesTopic is `ycsbctl help exit-codes`: a help topic, not a
// command.
func newExitCodesTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "Exit codes, and the statuses run.json records",
		Long:  exitCodesText(),
	}
}
