package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
//   - SQLSTATE class 08 (connection exception), 57P01-57P03 (admin or crash
//     shutdown, cannot connect now), 53300 (too many connections), a failed
//     connect, a network error or a connection lost mid-query →
//     engine.ErrUnavailable.
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
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505":
			return fmt.Errorf("%w: %w", engine.ErrConflict, err)
		case pgErr.Code == "22021", pgErr.Code == "22P05":
			return fmt.Errorf("%w: %w", record.ErrInvalidText, err)
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08",
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03",
			pgErr.Code == "53300":
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
