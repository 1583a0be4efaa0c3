package generator

import (
	"context"
	"testing"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
)

// CheckPublished runs rsgen's independent checker over the output of cfg,
// reading every resource too when they are published there, and fails the
// test on any error it finds. Every build in the generator's tests goes
// through it. (Exported for the black-box tests in package generator_test.)
func CheckPublished(t testing.TB, cfg *config.Config) {
	t.Helper()
	rep, err := checker.CheckDir(context.Background(), cfg.Out, checker.Options{BaseURL: cfg.BaseURL, VerifyContent: cfg.CopyResources})
	if err != nil {
		t.Fatalf("rsgen check %s: %v", cfg.Out, err)
	}
	for _, f := range rep.Findings {
		if f.Severity == checker.Error {
			t.Errorf("rsgen check: %s", f)
		}
	}
}
