package logging

import (
	"io"
	"time"

	"github.com/rs/zerolog"
)

// New logs to out: JSON lines, or the console format; warnings and
// errors that repeat collapsed (close the collapser before out).
func New(levelName, format string, out io.Writer) (zerolog.Logger, *Collapser) {
	level, _ := zerolog.ParseLevel(levelName)
	if format == "console" {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly}
	}
	c := NewCollapser(out, CollapseEvery)
	return zerolog.New(c).Level(level).With().Timestamp().Logger(), c
}
