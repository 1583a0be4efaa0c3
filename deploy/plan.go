package deploy

import (
	"time"

	"github.com/rsgen/rsgen/layout"
)

// task is one write of a deploy.
type task struct {
	obj  Object
	file *localFile
	// reheader: the store holds the bytes already; only the headers
	// change, and are applied without sending the bytes again.
	reheader bool
	// ifAbsent: the key is new and the object immutable, so it is written
	// with If-None-Match: * and never replaces anything.
	ifAbsent bool
}

// plan is what a deploy does: writes by step of publication, then deletes.
type plan struct {
	steps     [layout.NumSteps][]*task
	deletes   []string // keys deleted at the end
	deferred  int      // keys gone from the output, deleted once their grace period is over
	unchanged int      // files the store holds as they are
	final     *manifest
}

// maxCopySize is the largest object S3 copies in one request; the headers
// of a larger one are re-applied by uploading it again.
const maxCopySize = 5 << 30

// makePlan diffs the output files against the manifest m: a file whose
// key is new, whose bytes changed, or that an unfinished deploy meant to
// write is uploaded; one whose headers alone changed is re-headed (on a
// store that keeps headers); the others are left alone. A key of m that
// the output no longer has is deleted, once grace has passed since now
// (retired keys remember when they left).
func makePlan(files []*localFile, policy HeaderPolicy, m *manifest, keepsHeaders bool, now time.Time, grace time.Duration) *plan {
	p := &plan{final: newManifest()}
	local := make(map[string]bool, len(files))
	for _, f := range files {
		local[f.rel] = true
		obj := f.object(policy)
		p.final.entries[f.rel] = &entry{Object: obj}
		t := &task{obj: obj, file: f}
		e := m.entries[f.rel]
		switch {
		case e == nil:
			t.ifAbsent = obj.Headers.Immutable()
		case e.status == pending || e.Size != obj.Size || e.SHA256 != obj.SHA256:
		case e.Headers != obj.Headers && keepsHeaders:
			t.reheader = obj.Size <= maxCopySize
		default:
			p.unchanged++
			continue
		}
		step := layout.PublishStep(f.rel)
		p.steps[step] = append(p.steps[step], t)
	}
	for key, e := range m.entries {
		if local[key] {
			continue
		}
		since := now.Unix()
		if e.status == retired {
			since = e.since
		}
		if time.Duration(now.Unix()-since)*time.Second >= grace {
			p.deletes = append(p.deletes, key)
			continue
		}
		p.deferred++
		p.final.entries[key] = &entry{Object: e.Object, status: retired, since: since}
	}
	return p
}

// tasks counts the writes of the plan.
func (p *plan) tasks() int {
	n := 0
	for _, s := range p.steps {
		n += len(s)
	}
	return n
}

// pendingManifest returns m with the keys the plan writes marked pending,
// with what they will hold: the manifest a deploy stores before its
// first write.
func (p *plan) pendingManifest(m *manifest) *manifest {
	next := newManifest()
	for k, e := range m.entries {
		next.entries[k] = e
	}
	for _, s := range p.steps {
		for _, t := range s {
			next.entries[t.obj.Key] = &entry{Object: t.obj, status: pending}
		}
	}
	return next
}
