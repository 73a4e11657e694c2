"""Mocks of internal package contracts (`framework generate`: docs/reference-authoring.md#commands)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.authoring_fixtures import fw, go, go_caches, go_trimpath, project_copy

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")

CONTRACT = '''// Package ordercore is an internal package; its contract is the interface below.
package ordercore

import (
	"context"
	"io"
	tm "time"
)

// Order is a thing.
type Order struct{ ID int64 }

// Contract is what the rest of the project may rely on.
type Contract interface {
	Find(ctx context.Context,
		id int64) (*Order, error) // split over two lines
	Many(a, b string, rest ...int) []Order
	Touch(tm.Time)
	Close() error
}

// Reader embeds another interface: not mockable from the text alone, so skipped.
type Reader interface {
	io.Reader
}
'''

USE = '''package ordercore_test

import (
	"context"
	"testing"

	"example.com/shop/internal/ordercore"
	"example.com/shop/internal/ordercore/ordercoremock"
)

func TestMockStandsInForTheContract(t *testing.T) {
	m := &ordercoremock.Contract{
		FindFunc: func(_ context.Context, id int64) (*ordercore.Order, error) { return &ordercore.Order{ID: id}, nil },
		ManyFunc: func(a, b string, rest ...int) []ordercore.Order { return make([]ordercore.Order, len(rest)) },
	}
	var c ordercore.Contract = m
	got, err := c.Find(context.Background(), 7)
	if err != nil || got.ID != 7 {
		t.Fatalf("Find = %v, %v", got, err)
	}
	if n := len(c.Many("a", "b", 1, 2, 3)); n != 3 {
		t.Fatalf("Many: %d", n)
	}
	if len(m.Calls) != 2 || m.Calls[0] != "Find" || m.Calls[1] != "Many" {
		t.Fatalf("Calls = %v", m.Calls)
	}
}
'''


def test_generate_writes_a_mock_of_each_contract_interface(project_copy: Path) -> None:
    """docs/reference-authoring.md#commands: `generate` writes mocks of internal package contracts
    (internal/<name>/contract.go): one Func per method, calls recorded, a compile-time check against the
    interface; the user's test using the mock builds and passes."""
    mock = project_copy / "internal/ordercore/ordercoremock/mock.go"
    assert "var _ ordercore.Contract = (*Contract)(nil)" in mock.read_text()  # project new's own contract
    (project_copy / "internal/ordercore/contract.go").write_text(CONTRACT)
    code, doc, err = fw("generate", cwd=project_copy)
    assert code == 0, err
    assert "internal/ordercore/ordercoremock/mock.go" in doc["changed"]
    text = " ".join(mock.read_text().split())
    assert "TouchFunc func(p0 tm.Time)" in text and "ManyFunc func(a string, b string, rest ...int)" in text
    assert "Reader" not in text
    (project_copy / "internal/ordercore/contract_test.go").write_text(USE)
    for args in (("vet", "./internal/ordercore/..."), ("test", "-count=1", "./internal/ordercore/...")):
        proc = go(*args, cwd=project_copy)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
