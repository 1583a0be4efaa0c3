package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/rs"
)

// siteFlags locate a site: the configuration file, and the values that
// override it. build, status and watch share them.
type siteFlags struct {
	config, source, out, baseURL, state, describedBy string
}

func (f *siteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "the configuration `FILE` (default: ./rsgen.toml when there is one)")
	fs.StringVar(&f.source, "source", "", "the `DIR` of files to publish (config: source)")
	fs.StringVar(&f.out, "out", "", "the `DIR` the site is written into (config: out)")
	fs.StringVar(&f.baseURL, "base-url", "", "the `URL` at which the output folder is served (config: base_url)")
	fs.StringVar(&f.state, "state", "", "the `DIR` of rsgen's state (config: state)")
	fs.StringVar(&f.describedBy, "describedby", "", "the `URL` of a description of the Source (config: describedby)")
}

// load reads the configuration file, applies the flags over it and
// validates the result. It returns the configuration file used, if any.
func (f *siteFlags) load() (*config.Config, string, error) {
	path, cfg, err := loadConfigOrDefault(f.config)
	if err != nil {
		return nil, "", err
	}
	if path != "" {
		if path, err = filepath.Abs(path); err != nil {
			return nil, "", err
		}
	} else if wd, err := os.Getwd(); err == nil {
		cfg.Dir = wd
	} else {
		return nil, "", err
	}
	for _, fl := range []struct {
		key, value string
		dst        *string
	}{{"source", f.source, &cfg.Source}, {"out", f.out, &cfg.Out}, {"state", f.state, &cfg.State}} {
		if fl.value != "" {
			abs, err := filepath.Abs(fl.value)
			if err != nil {
				return nil, "", err
			}
			*fl.dst = abs
			cfg.Override(fl.key)
		}
	}
	for _, fl := range []struct {
		key, value string
		dst        *string
	}{{"base_url", f.baseURL, &cfg.BaseURL}, {"describedby", f.describedBy, &cfg.DescribedBy}} {
		if fl.value != "" {
			*fl.dst = fl.value
			cfg.Override(fl.key)
		}
	}
	if err := cfg.Validate(); err != nil {
		if path == "" && cfg.BaseURL == "" {
			return nil, "", &config.Error{Msg: "there is no rsgen.toml here, and no --base-url: run rsgen init to write one (then set base_url in it), or pass --base-url, --source and --out"}
		}
		return nil, "", err
	}
	return &cfg, path, nil
}

// loadToBuild is load for the commands that read the source: a source
// folder that is not there is a configuration error.
func (f *siteFlags) loadToBuild() (*config.Config, string, error) {
	cfg, path, err := f.load()
	if err == nil {
		err = cfg.CheckSource()
	}
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}

// loadConfigFile is config.Load, except that a file that is there but
// cannot be read (an I/O error) fails the command (exit 1) instead of
// being reported as a configuration error (exit 2): a missing file, a
// folder or a permission denied remain the user's to fix.
// loadConfigOrDefault loads the configuration file path, or, when path is
// empty, ./rsgen.toml when there is one, else the defaults. It returns the
// file it loaded ("" for none). Only a file that is not there means "no
// configuration": one that cannot be stat'ed is read, and its error
// reported.
func loadConfigOrDefault(path string) (string, config.Config, error) {
	if path == "" {
		if _, err := os.Stat(config.FileName); errors.Is(err, fs.ErrNotExist) {
			return "", config.Default(), nil
		}
		path = config.FileName
	}
	cfg, err := loadConfigFile(path)
	return path, cfg, err
}

func loadConfigFile(path string) (config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
			return config.Load(path) // its error says what is wrong
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return config.Config{}, fmt.Errorf("%s: cannot read the configuration file: %w", path, err)
	}
	cfg, err := config.Parse(bytes.NewReader(data), path)
	if err != nil {
		return config.Config{}, err
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return config.Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg.Dir = abs
	return cfg, nil
}

// exitCodeOf maps an error to the exit code: configuration errors are
// usage errors.
func exitCodeOf(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return exitUsage
	}
	return exitFailure
}

// buildTime returns a build's time: now (from --now) when set, else
// SOURCE_DATE_EPOCH, else the clock. A time no document can carry is
// refused.
func buildTime(now string, getenv func(string) string) (time.Time, error) {
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return time.Time{}, fmt.Errorf("--now %q: want an RFC 3339 time such as 2024-05-01T12:00:00Z", now)
		}
		if err := rs.CheckTime(t); err != nil {
			return time.Time{}, fmt.Errorf("--now: %w", err)
		}
		return t, nil
	}
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want a whole number of seconds since 1970", s)
		}
		if sec > rs.MaxTime.Unix() {
			sec = rs.MaxTime.Unix() + 1 // beyond time.Unix's range for CheckTime to refuse
		}
		if err := rs.CheckTime(time.Unix(sec, 0)); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(sec, 0), nil
	}
	return time.Now(), nil
}

// nowUsage is the help of --now.
const nowUsage = "the build `TIME`, RFC 3339 (default: $SOURCE_DATE_EPOCH, else the clock)"

// plural returns "1 noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
