package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// translate maps a pgx error to the engine's sentinels, wrapping the
// original error:
//   - pgx.ErrNoRows → engine.ErrNotFound;
//   - SQLSTATE 23505 (unique_violation) → engine.ErrConflict;
//   - SQLSTATE 22021 (character_not_in_repertoire: a NUL or invalid UTF-8
//     in text) and 22P05 (untranslatable_character: \u0000 in jsonb) →
//     record.ErrInvalidText, a client error;
//   - a failed connect (checked first: a *pgconn.ConnectError wraps the
//     server's PgError, such as 3D000 when the database was dropped),
//     SQLSTATE classes 08 (connection exception), 28 (invalid
//     authorization), 3D (invalid catalog name: no such database) and 57P
//     (admin or crash shutdown, cannot connect now, database dropped),
//     53300 (too many connections), 42P01 (undefined_table: the database
//     was recreated empty, so our own tables are missing), a network error
//     or a connection lost mid-query → engine.ErrUnavailable.
//
// Context errors and everything else are returned unchanged. See
// https://www.postgresql.org/docs/current/errcodes-appendix.html.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", engine.ErrNotFound, err)
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		code := pgErr.Code
		switch {
		case code == "23505":
			return fmt.Errorf("%w: %w", engine.ErrConflict, err)
		case code == "22021", code == "22P05":
			return fmt.Errorf("%w: %w", record.ErrInvalidText, err)
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "28"), strings.HasPrefix(code, "3D"),
			strings.HasPrefix(code, "57P"), code == "53300", code == "42P01":
			return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
		}
		return err
	}
	if isConnectionError(err) {
		return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
	}
	return err
}

// isConnectionError reports whether err means the connection to Postgres
// could not be made or was lost.
func isConnectionError(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	case pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	}
	return false
}

// isUnavailable reports whether err was translated to ErrUnavailable.
func isUnavailable(err error) bool { return errors.Is(err, engine.ErrUnavailable) }
