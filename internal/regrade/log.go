package regrade

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHandler is a slog.Handler writing to a zap logger, so that river's
// own log lines (it logs through log/slog) join the service's JSON log.
// Only warnings and errors pass: river logs every job at info level.
type zapHandler struct {
	log   *zap.Logger
	attrs []zap.Field
	group string
}

func newSlog(log *zap.Logger) *slog.Logger {
	return slog.New(&zapHandler{log: log.Named("river")})
}

func (h *zapHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.log.Core().Enabled(zapLevel(l))
}

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

func (h *zapHandler) Handle(_ context.Context, r slog.Record) error {
	fields := make([]zap.Field, 0, len(h.attrs)+r.NumAttrs())
	fields = append(fields, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, h.field(a))
		return true
	})
	if ce := h.log.Check(zapLevel(r.Level), r.Message); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

func (h *zapHandler) field(a slog.Attr) zap.Field {
	key := a.Key
	if h.group != "" {
		key = h.group + "." + key
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return zap.String(key, v.String())
	case slog.KindInt64:
		return zap.Int64(key, v.Int64())
	case slog.KindBool:
		return zap.Bool(key, v.Bool())
	case slog.KindDuration:
		return zap.Duration(key, v.Duration())
	}
	if err, ok := v.Any().(error); ok {
		return zap.NamedError(key, err)
	}
	return zap.Any(key, v.Any())
}

func (h *zapHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append(append([]zap.Field(nil), h.attrs...), make([]zap.Field, 0, len(attrs))...)
	for _, a := range attrs {
		h2.attrs = append(h2.attrs, h.field(a))
	}
	return &h2
}

func (h *zapHandler) WithGroup(name string) slog.Handler {
	h2 := *h
	if h.group != "" {
		name = h.group + "." + name
	}
	h2.group = name
	return &h2
}
