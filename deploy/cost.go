package deploy

import (
	"fmt"
	"os"
)

// What requests cost, for --dry-run's estimate: S3 Standard in us-east-1,
// AWS list prices of 2025, in US dollars per request. Other providers and
// regions differ (several S3-compatible services charge nothing per
// request); the estimate says which prices it uses.
const (
	pricePut    = 0.005 / 1000  // PUT, COPY, POST, LIST
	priceGet    = 0.0004 / 1000 // GET, HEAD
	PriceSource = "S3 Standard us-east-1 list prices: $0.005 per 1,000 PUT/COPY/POST, $0.0004 per 1,000 GET/HEAD, DELETE free"
)

// Cost estimates what the requests cost at PriceSource's prices.
func (r Requests) Cost() float64 {
	return float64(r.Put+r.Copy+r.Other)*pricePut + float64(r.Get+r.Head)*priceGet
}

// add returns the sum of r and o.
func (r Requests) add(o Requests) Requests {
	return Requests{Put: r.Put + o.Put, Copy: r.Copy + o.Copy, Get: r.Get + o.Get, Head: r.Head + o.Head,
		Delete: r.Delete + o.Delete, Other: r.Other + o.Other, BytesSent: r.BytesSent + o.BytesSent}
}

// estimate returns the requests a deploy of plan p makes: the lock
// (taken and released), the manifest read again and written before and
// after the writes, one HEAD per write an interrupted deploy may have
// made, one request per write, one per 1,000 deletes (of those cleared
// before the writes, and of the others). Multipart uploads
// are counted as one PUT each. It finishes the final manifest, for its
// size.
func estimate(p *plan) (Requests, error) {
	var r Requests
	if !p.changed {
		return r, nil
	}
	path, err := p.manifestFile(p.final, "final")
	if err != nil {
		return r, fmt.Errorf("state folder: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return r, fmt.Errorf("state folder: %w", err)
	}
	r.Put = 2 // the lock, the final manifest
	r.Get = 1 // the manifest, again under the lock
	r.Delete = 1 + (p.deleted.Len()+deleteBatch-1)/deleteBatch + (p.cleared.Len()+deleteBatch-1)/deleteBatch
	r.BytesSent = info.Size()
	if p.tasks() > 0 {
		r.Put++ // the pending manifest
		r.BytesSent += info.Size()
	}
	r.Head = p.checks
	for _, st := range p.steps {
		r.Put += st.Uploads
		r.Copy += st.Reheaders
		r.BytesSent += st.Bytes
	}
	return r, nil
}
