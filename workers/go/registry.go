package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// registry: every access method of this worker, by name, with the constructor of its
// driver, in the order the worker names them. The session's driver (chooseMethod), the
// drivers of a loaded step's clients, hello's methods and the names given in the answer to
// an unknown method all come from here; adding a method is one line below and its driver_*.go.
var registry = []struct {
	name string
	mk   func() dbDriver
}{
	{"go-pgx", newPgxDriver},
	{"go-pgx-stdlib", newPgxStdlibDriver},
	{"go-pq", newPqDriver},
	{"go-sqlite", newSqliteDriver},
	{"go-mysql", newMysqlDriver},
	// layers: a library above one of the methods above (layer.go)
	{"go-gorm+pgx-stdlib", newGormPgxDriver},
	{"go-sqlx+pgx-stdlib", newSqlxPgxDriver},
	{"go-gorm+mysql", newGormMysqlDriver},
	{"go-sqlx+mysql", newSqlxMysqlDriver},
}

// driverFor is the constructor of a method's driver; false for a name not in the registry.
func driverFor(method string) (func() dbDriver, bool) {
	for _, m := range registry {
		if m.name == method {
			return m.mk, true
		}
	}
	return nil, false
}

// methodNames: the registry's names, in its order, comma-separated.
func methodNames() string {
	names := make([]string, len(registry))
	for k, m := range registry {
		names[k] = m.name
	}
	return strings.Join(names, ", ")
}

// methodList: the registry's names, sorted, each once (hello's methods).
func methodList() []string {
	names := make([]string, 0, len(registry))
	for _, m := range registry {
		names = append(names, m.name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// noSetting is a driver's configure answer to a setting its method does not have; have
// names the ones it has ("" for none). The session names the method (settingError).
type noSetting struct{ have string }

func (e noSetting) Error() string { return "no such setting" }

// settingError is the answer to setting key=value of method that configure refused.
func settingError(method, key, value string, err error) string {
	var ns noSetting
	if !errors.As(err, &ns) {
		return err.Error()
	}
	msg := fmt.Sprintf("%s has no setting %s=%s", method, key, value)
	if ns.have != "" {
		msg += " (" + ns.have + ")"
	}
	return msg
}
