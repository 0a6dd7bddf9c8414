"""Credentials of each known format, made up for the tests (none is a real one): the value, and the part of
it that must never be shown (all of it, or the password of a URL, the key of a connection string)."""

from __future__ import annotations

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
    "-----END RSA PRIVATE KEY-----"
)
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\n"
    "Encryption: none\n"
    "Comment: me@laptop\n"
    "Public-Lines: 2\n"
    "AAAAC3NzaC1lZDI1NTE5AAAAIOz0Zk1kK0QzRk2d9q5y0r3zW0E0fA3h1Gq8p9s0vXyZ\n"
    "Private-Lines: 1\n"
    "AAAAIHcxzS0j3wVbq7nT1p8mC2rXk4yL6sQ9dF0gH5jK2lMnAAAAAAAAAAAAAAAAAAA\n"
    "Private-MAC: 6c5f2a1e0d9b8a7c6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a"
)
AZURE_KEY = "Zm9yLXRlc3RzLW9ubHktbm90LWEtcmVhbC1henVyZS1zdG9yYWdlLWFjY291bnQta2V5LTAxMjM0NTY3ODk="

#: name → (value, the secret part of it)
FORMATS: dict[str, tuple[str, str]] = {
    "AWS access key id": ("AKIAQYLPMN5HHHFPZAM2", "AKIAQYLPMN5HHHFPZAM2"),
    "AWS secret key, named": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY",
    ),
    "Google API key": ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    "Google OAuth token": ("ya29.a0AfH6SMBx3kq9ZpQ7T2yLm8NvC4", "ya29.a0AfH6SMBx3kq9ZpQ7T2yLm8NvC4"),
    "GitHub token": ("ghp_R2d2C3poBb8LukeLeiaHanSoloChewie0123", "ghp_R2d2C3poBb8LukeLeiaHanSoloChewie0123"),
    "GitLab token": ("glpat-xY7zQ2mN9pL4kR8sT1vW", "glpat-xY7zQ2mN9pL4kR8sT1vW"),
    "Slack token": ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123"),
    "Slack webhook": (
        "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/q1w2e3r4t5y6u7i8o9p0a1s2",
        "T01ABCDEF/B02GHIJKL/q1w2e3r4t5y6u7i8o9p0a1s2",
    ),
    "Stripe live key": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    "npm token": ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    "PyPI token": (
        "pypi-AgEIcHlwaS5vcmcCJDk4ZjM2YjE0LTlhMzItNDk1Yi1hNTE0LWE2YzE3ZDVhNzQ5NgACKlszLCJmYzY0",
        "pypi-AgEIcHlwaS5vcmcCJDk4ZjM2YjE0LTlhMzItNDk1Yi1hNTE0LWE2YzE3ZDVhNzQ5NgACKlszLCJmYzY0",
    ),
    "Hugging Face token": ("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", "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"),
    "OpenAI key": (
        "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678",
        "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678",
    ),
    "JWT": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "PEM private key": (PEM, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"),
    "PuTTY key": (PUTTY, "AAAAIHcxzS0j3wVbq7nT1p8mC2rXk4yL6sQ9dF0gH5jK2lMnAAAAAAAAAAAAAAAAAAA"),
    "Redis URL, no user": ("redis://:r3dis-Pa55word@cache:6379/0", "r3dis-Pa55word"),
    "Postgres URL": ("postgresql://trainer:pg-S3cret!@db.internal:5432/runs", "pg-S3cret!"),
    "Azure storage connection string": (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
        AZURE_KEY,
    ),
    "ODBC connection string": ("Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=Odbc-Pa55;", "Odbc-Pa55"),
    "Google OAuth refresh token": ("1//0gLuRkPxqW7zYvBn3Mk5sTjHd2QfLa9Xc", "1//0gLuRkPxqW7zYvBn3Mk5sTjHd2QfLa9Xc"),
    "Google OAuth client secret": ("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", "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"),
    "Discord webhook": (
        "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    ),
    "npm _authToken": ("//registry.npmjs.org/:_authToken=plain-npm-auth-value", "plain-npm-auth-value"),
    "Telegram bot token": (
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    ),
    "Mailchimp key": ("0123456789abcdef0123456789abcdef-us21", "0123456789abcdef0123456789abcdef-us21"),
    "Databricks token": ("dapi0123456789abcdef0123456789abcdef", "dapi0123456789abcdef0123456789abcdef"),
    "Azure SAS": ("https://acct.blob.core.windows.net/c?sv=2022&sig=Zm9yLXRlc3RzLW9ubHk%3D", "Zm9yLXRlc3RzLW9ubHk%3D"),
    "SSH2 private key": (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAAi4AAAA3aWYtbW9kbntzaWdue3JzYS1wa2NzMS1zaGExfSxlbmNyeXB0\n"
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        "P2/56wAAAi4AAAA3aWYtbW9kbntzaWdue3JzYS1wa2NzMS1zaGExfSxlbmNyeXB0",
    ),
    "SendGrid key": (
        "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",
        "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",
    ),
}
