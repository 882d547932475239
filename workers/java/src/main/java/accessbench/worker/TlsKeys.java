package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;

/** The endpoint's TLS keys (PROTOCOL.md, open), in libpq's words for both DBMSs, read once:
 * each driver maps them onto its own connection properties. Absent keys read as "". */
record TlsKeys(String mode, String rootcert, String version, String negotiation) {
    static TlsKeys of(JsonNode ep) {
        return new TlsKeys(ep.path("sslmode").asText(""), ep.path("sslrootcert").asText(""),
                ep.path("tls_version").asText(""), ep.path("sslnegotiation").asText(""));
    }

    /** verify-ca or verify-full: the only modes that take the CA's file */
    boolean verifies() {
        return mode.equals("verify-ca") || mode.equals("verify-full");
    }
}
