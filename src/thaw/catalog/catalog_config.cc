#include "thaw/catalog/catalog_config.h"

#include <pwd.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "thaw/catalog/rest_catalog.h"
#include "thaw/catalog/sql_catalog.h"

extern char** environ;

namespace thaw::catalog {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The PYICEBERG_CATALOG__NAME__... spelling of a catalog name.
std::string EnvName(std::string_view name) {
  std::string out(name);
  for (auto& c : out) c = c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

// "scheme:..." — a catalog NAME never holds a colon.
bool IsUri(std::string_view arg) { return arg.find(':') != std::string_view::npos; }

Result<std::string> InferType(const std::string& uri, const std::string& where) {
  const std::string l = Lower(uri);
  if (StartsWith(l, "http://") || StartsWith(l, "https://")) return std::string("rest");
  if (StartsWith(l, "sqlite:") || StartsWith(l, "postgresql") || StartsWith(l, "postgres://") ||
      StartsWith(l, "jdbc:")) {
    return std::string("sql");
  }
  return Status::Invalid(
      "catalog URI '{}'{} has no known scheme: use http(s)://HOST:PORT[/PATH] for a REST catalog, "
      "sqlite:////PATH/catalog.db or postgresql://USER:PASSWORD@HOST:PORT/DATABASE for a SQL catalog",
      RedactUri(uri), where);
}

void Flatten(const YAML::Node& node, const std::string& prefix, const std::string& file, const std::string& name,
             PyicebergConfig* out, Status* error) {
  for (const auto& kv : node) {
    if (!error->ok()) return;
    const std::string key = prefix + Lower(kv.first.Scalar());
    const std::string where = fmt::format("{} key catalog.{}.{}", file, name, key);
    if (kv.second.IsMap()) {
      Flatten(kv.second, key + ".", file, name, out, error);
    } else if (kv.second.IsScalar()) {
      out->catalogs[name][key] = kv.second.Scalar();
      out->sources[name][key] = where;
    } else if (kv.second.IsNull()) {
      out->catalogs[name][key] = "";
      out->sources[name][key] = where;
    } else {
      *error = Status::Invalid("{}: expected a string value, not a list", where);
    }
  }
}

}  // namespace

std::string CatalogConfig::Describe() const {
  std::string s = fmt::format("{} catalog", type.empty() ? "a" : type);
  if (!name.empty()) s += fmt::format(" '{}'", name);
  if (!uri.empty()) s += " at " + RedactUri(uri);
  auto src = sources.find("uri");
  if (src != sources.end()) s += " (uri from " + src->second + ")";
  return s;
}

Status ParsePyicebergYaml(const std::string& text, const std::string& file, PyicebergConfig* out) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid("{} line {} column {}: not valid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (root.IsNull()) return Status::OK();  // an empty file
  if (!root.IsMap())
    return Status::Invalid("{}: expected a mapping at the top (catalog: {{NAME: {{uri: ...}}}})", file);
  Status error;
  try {
    for (const auto& top : root) {
      if (Lower(top.first.Scalar()) != "catalog") continue;  // default-catalog, downcast-ns-timestamp..., etc.
      if (top.second.IsNull()) continue;
      if (!top.second.IsMap()) return Status::Invalid("{} key catalog: expected a mapping of catalog names", file);
      for (const auto& cat : top.second) {
        const std::string name = Lower(cat.first.Scalar());
        if (!cat.second.IsMap()) {
          return Status::Invalid("{} key catalog.{}: expected a mapping of properties (uri: ..., type: ...)", file,
                                 name);
        }
        out->catalogs[name];
        Flatten(cat.second, "", file, name, out, &error);
        if (!error.ok()) return error;
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::Invalid("{} line {}: {}", file, e.mark.line + 1, e.msg);
  }
  return Status::OK();
}

void ApplyPyicebergEnvironment(const std::vector<std::pair<std::string, std::string>>& env, PyicebergConfig* out) {
  for (const auto& [var, value] : env) {
    const std::string lower = Lower(var);
    if (!StartsWith(lower, "pyiceberg_")) continue;
    const std::string key = lower.substr(10);
    // Split at the first two "__"; the rest stays in the last part.
    std::vector<std::string> parts;
    size_t start = 0;
    while (parts.size() < 2) {
      size_t at = key.find("__", start);
      if (at == std::string::npos) break;
      parts.push_back(key.substr(start, at - start));
      start = at + 2;
    }
    parts.push_back(key.substr(start));
    for (auto& p : parts) p = ReplaceAll(ReplaceAll(p, "__", "."), "_", "-");
    if (parts.size() != 3 || parts[0] != "catalog") continue;
    auto& props = out->catalogs[parts[1]];
    auto it = props.find(parts[2]);
    if (value.empty() && it != props.end() && !it->second.empty()) continue;  // pyiceberg keeps the non-empty value
    props[parts[2]] = value;
    out->sources[parts[1]][parts[2]] = var;
  }
}

Result<PyicebergConfig> LoadPyicebergConfig() {
  PyicebergConfig config;
  std::vector<std::string> dirs;
  if (const char* h = std::getenv("PYICEBERG_HOME"); h && *h) dirs.emplace_back(h);
  if (const char* h = std::getenv("HOME"); h && *h) {
    dirs.emplace_back(h);
  } else if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) {
    dirs.emplace_back(pw->pw_dir);
  }
  std::error_code ec;
  if (auto cwd = std::filesystem::current_path(ec); !ec) dirs.push_back(cwd.string());
  for (const auto& d : dirs) {
    const std::string path = (std::filesystem::path(d) / ".pyiceberg.yaml").string();
    config.searched.push_back(path);
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) return Status::IOError("{}: cannot read the file", path);
    config.file = path;
    RETURN_NOT_OK(ParsePyicebergYaml(text.str(), path, &config));
    break;
  }
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  ApplyPyicebergEnvironment(env, &config);
  return config;
}

Result<CatalogConfig> ResolveCatalogConfig(const std::string& catalog_arg,
                                           const std::vector<std::string>& property_args,
                                           const storage::PropertyMap& config_file_properties,
                                           const std::string& catalog_name_flag) {
  // The pyiceberg files are read only for a catalog NAME.
  const bool by_name = !catalog_arg.empty() && !IsUri(catalog_arg);
  PyicebergConfig pyiceberg;
  if (by_name) {
    ASSIGN_OR_RAISE(pyiceberg, LoadPyicebergConfig());
  }
  return ResolveCatalogConfig(catalog_arg, property_args, config_file_properties, catalog_name_flag, pyiceberg);
}

Result<CatalogConfig> ResolveCatalogConfig(const std::string& catalog_arg,
                                           const std::vector<std::string>& property_args,
                                           const storage::PropertyMap& config_file_properties,
                                           const std::string& catalog_name_flag, const PyicebergConfig& pyiceberg) {
  CatalogConfig c;
  // Lowest first: yaml/env (a named catalog), the config file, the command line.
  std::string catalog_arg_name;
  if (!catalog_arg.empty() && !IsUri(catalog_arg)) {
    catalog_arg_name = catalog_arg;
    auto it = pyiceberg.catalogs.find(Lower(catalog_arg));
    if (it == pyiceberg.catalogs.end()) {
      std::string known;
      for (const auto& [n, props] : pyiceberg.catalogs) {
        bool from_file = false;
        auto srcs = pyiceberg.sources.find(n);
        if (srcs != pyiceberg.sources.end()) {
          for (const auto& [k, src] : srcs->second)
            from_file |= !pyiceberg.file.empty() && StartsWith(src, pyiceberg.file);
        }
        known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", n, from_file ? pyiceberg.file : "environment");
      }
      std::string searched;
      for (const auto& s : pyiceberg.searched) searched += (searched.empty() ? "" : ", ") + s;
      return Status::NotFound(
          "catalog '{}' is not configured: {}, and no PYICEBERG_CATALOG__{}__URI (or other "
          "PYICEBERG_CATALOG__{}__KEY) variable is set; configured catalogs: {}. Give a URI instead "
          "(--catalog sqlite:////PATH/catalog.db, postgresql://..., http(s)://...) or add it to .pyiceberg.yaml "
          "(docs/catalogs.md)",
          catalog_arg,
          pyiceberg.file.empty()
              ? fmt::format("no .pyiceberg.yaml found (looked for {})", searched.empty() ? "none" : searched)
              : fmt::format("{} has no catalog.{}", pyiceberg.file, Lower(catalog_arg)),
          EnvName(catalog_arg), EnvName(catalog_arg), known.empty() ? "none" : known);
    }
    c.properties = it->second;
    auto src = pyiceberg.sources.find(it->first);
    if (src != pyiceberg.sources.end()) c.sources = src->second;
  }
  for (const auto& [k, v] : config_file_properties) {
    c.properties[k] = v;
    c.sources[k] = "the [catalog] table of the config file";
  }
  for (const auto& arg : property_args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Invalid("--catalog-property '{}': expected KEY=VALUE (e.g. s3.endpoint=http://127.0.0.1:9000)",
                             eq == std::string::npos ? arg : std::string("=..."));
    }
    const std::string key = arg.substr(0, eq);
    c.properties[key] = arg.substr(eq + 1);
    c.sources[key] = "--catalog-property " + key;
  }
  if (!catalog_arg.empty() && IsUri(catalog_arg)) {
    c.properties["uri"] = catalog_arg;
    c.sources["uri"] = "--catalog";
  }
  auto uri = c.properties.find("uri");
  if (uri == c.properties.end() || uri->second.empty()) {
    if (!catalog_arg_name.empty()) {
      auto src = c.sources.find("uri");
      return Status::Invalid(
          "catalog '{}' has no uri{}: set catalog.{}.uri in .pyiceberg.yaml or "
          "PYICEBERG_CATALOG__{}__URI",
          catalog_arg_name, src == c.sources.end() ? "" : " (empty in " + src->second + ")", Lower(catalog_arg_name),
          EnvName(catalog_arg_name));
    }
    return Status::Invalid(
        "which catalog? give --catalog URI (sqlite:////PATH/catalog.db, postgresql://..., http(s)://...) or "
        "--catalog NAME of a catalog in ~/.pyiceberg.yaml, or uri in the config file's [catalog] table");
  }
  c.uri = uri->second;
  const std::string uri_where = " (uri from " + c.sources["uri"] + ")";
  auto type = c.properties.find("type");
  if (type != c.properties.end() && !type->second.empty()) {
    c.type = Lower(type->second);
    if (c.type != "sql" && c.type != "rest") {
      return Status::Unsupported("catalog type '{}' (from {}) is not one Thaw reads: use sql or rest", type->second,
                                 c.sources["type"]);
    }
  } else {
    ASSIGN_OR_RAISE(c.type, InferType(c.uri, uri_where));
  }
  if (!catalog_name_flag.empty()) {
    c.name = catalog_name_flag;
  } else if (!catalog_arg_name.empty()) {
    c.name = catalog_arg_name;  // pyiceberg's SqlCatalog keeps its rows under the catalog's name
  } else {
    c.name = c.type == "rest" ? "rest" : "";
  }
  return c;
}

Result<std::unique_ptr<Catalog>> OpenCatalog(const CatalogConfig& config) {
  if (config.type == "rest") return OpenRestCatalog(config);
  if (config.type == "sql" || config.type.empty()) {
    ASSIGN_OR_RAISE(auto cat, SqlCatalog::Make(config));
    return std::unique_ptr<Catalog>(std::move(cat));
  }
  return Status::Unsupported("catalog type '{}' is not one Thaw reads: use sql or rest", config.type);
}

}  // namespace thaw::catalog
