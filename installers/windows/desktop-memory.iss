; Inno Setup 6 script: a per-user install (no admin rights) of the PyInstaller folder dist\desktop-memory.
;   iscc /DAppVersion=0.1.0 installers\windows\desktop-memory.iss     -> dist\desktop-memory-setup.exe
; The uninstaller removes the program and keeps the person's memories unless they tick the box.
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
; where the PyInstaller folder and the setup.exe go (scripts/windows/check.sh builds outside the checkout)
#ifndef DistDir
  #define DistDir "..\..\dist"
#endif

[Setup]
AppId={{6C1F5E0A-3B8E-4C59-9B0B-6D8E2F1A7C41}
AppName=desktop-memory
AppVersion={#AppVersion}
AppPublisher=desktop-memory
DefaultDirName={localappdata}\Programs\desktop-memory
DefaultGroupName=desktop-memory
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=
DisableProgramGroupPage=yes
OutputDir={#DistDir}
OutputBaseFilename=desktop-memory-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
UninstallDisplayIcon={app}\desktop-memory.exe

[Tasks]
Name: "autostart"; Description: "Start desktop-memory when I log in"; GroupDescription: "Options:"; Flags: unchecked

[Files]
Source: "{#DistDir}\desktop-memory\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{userprograms}\desktop-memory"; Filename: "{app}\desktop-memory.exe"; Parameters: "app"
Name: "{userstartup}\desktop-memory"; Filename: "{app}\desktop-memory.exe"; Parameters: "app"; Tasks: autostart

[Run]
; the browser companion's native messaging host: HKCU keys for Chrome, Chromium, Edge, Brave and Firefox
Filename: "{app}\desktop-memory.exe"; Parameters: "setup-browser --browser all"; StatusMsg: "Registering the browser companion..."; Flags: runhidden waituntilterminated
Filename: "{app}\desktop-memory.exe"; Parameters: "app"; Description: "Start desktop-memory now"; Flags: nowait postinstall skipifsilent

[UninstallRun]
Filename: "{app}\desktop-memory.exe"; Parameters: "setup-browser --remove --browser all"; Flags: runhidden waituntilterminated; RunOnceId: "RemoveBrowserHost"
Filename: "{cmd}"; Parameters: "/C taskkill /IM desktop-memory.exe /F"; Flags: runhidden; RunOnceId: "StopApp"

[Code]
var
  PurgeData: Boolean;

function InitializeUninstall(): Boolean;
begin
  // a silent uninstall (/VERYSILENT /SUPPRESSMSGBOXES) asks nothing and keeps the memories
  PurgeData := SuppressibleMsgBox('Also erase your memories (the data folder)? They are kept if you answer No.',
                                  mbConfirmation, MB_YESNO or MB_DEFBUTTON2, IDNO) = IDYES;
  Result := True;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if (CurUninstallStep = usPostUninstall) and PurgeData then
    DelTree(ExpandConstant('{localappdata}\desktop-memory'), True, True, True);
end;
